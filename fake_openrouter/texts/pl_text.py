"""Polish reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="pl",
    replies=(
        (
            "*Stawia na stole dwa parujące kubki i przesuwa jeden w twoją stronę.*",
            "„Wyglądasz, jakbyś przeszedł przez pół burzy, żeby się tu dostać.”",
            "„Usiądź, ogrzej ręce i opowiedz mi, co się wydarzyło na północnym trakcie.”",
        ),
        (
            "*Zamyka ciężką księgę z cichym stuknięciem i unosi brew.*",
            "„O tej porze nie spodziewałem się nikogo w archiwum, a już na pewno nie ciebie.”",
            "„Jeśli szukasz starej mapy, obawiam się, że ktoś już ją wypożyczył.”",
        ),
        (
            "*Pani kapitan odchyla się w fotelu i patrzy, jak gwiazdy przesuwają się za iluminatorem.*",
            "„Mamy jakieś sześć godzin, zanim stacja zauważy, że zniknęliśmy.”",
            "„To powinno wystarczyć, żebyś mi wyjaśnił, dlaczego wpuściłeś na pokład pasażera na gapę.”",
        ),
        (
            "*Mira klęka przy strumieniu i odgarnia mech ze starego kamienia.*",
            "„Spójrz, ktoś wyrył tu litery starsze niż jakakolwiek wioska w tej dolinie.”",
            "„Moja babcia zawsze mówiła, że las pamięta każdego, kto przez niego przechodzi.”",
        ),
        (
            "*Kupiec śmieje się i rozkłada na ladzie bel niebieskiego jedwabiu.*",
            "„Dla podróżnika o tak dobrym guście mógłbym trochę obniżyć cenę.”",
            "„Ale tylko jeśli obiecasz, że opowiesz całemu portowi, gdzie go znalazłeś.”",
        ),
        (
            "*Otula twoje ramiona kocem i siada obok ciebie przy oknie.*",
            "„Deszcz nie przestanie padać przed świtem, więc nie ma sensu spieszyć się do domu.”",
            "„Zostań, a ugotuję ci zupę, którą moja mama robiła w takie wieczory jak ten.”",
        ),
    ),
    refusal="Przykro mi, ale nie mogę kontynuować tej prośby ani poprowadzić historii w tym kierunku.",
    loop_phrase="i drzwi znowu się otwierają",
    drift_sentences=(
        "Stary zegar w korytarzu wybił północ i nikt w domu się nie poruszył.",
        "Zimny wiatr przemknął przez plac i rozrzucił ostatnie jesienne liście.",
        "Gdzieś pod murami zamku pies zaszczekał dwa razy, a potem ucichł.",
        "Karczmarz liczył monety powoli, jakby każda z nich opowiadała inną historię.",
        "Zanim łódź dotarła do wyspy, mgła pochłonęła już całe wybrzeże.",
        "Nikt nie zauważył listu na parapecie, dopóki świeca się nie wypaliła.",
    ),
)
