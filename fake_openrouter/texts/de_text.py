"""German reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="de",
    replies=(
        (
            "*Sie stellt zwei dampfende Becher auf den Tisch und schiebt dir einen davon hinüber.*",
            "„Du siehst aus, als wärst du durch den halben Sturm gelaufen, um hierherzukommen.“",
            "„Setz dich, wärm dir die Hände und erzähl mir, was auf der Nordstraße passiert ist.“",
        ),
        (
            "*Er klappt das schwere Buch mit einem dumpfen Laut zu und hebt eine Augenbraue.*",
            "„Um diese Uhrzeit habe ich niemanden im Archiv erwartet, am allerwenigsten dich.“",
            "„Falls du die alte Karte suchst, fürchte ich, dass sie schon jemand ausgeliehen hat.“",
        ),
        (
            "*Die Kapitänin lehnt sich in ihrem Sessel zurück und sieht zu, wie die Sterne am Sichtfenster vorbeiziehen.*",
            "„Wir haben ungefähr sechs Stunden, bevor die Station merkt, dass wir weg sind.“",
            "„Das sollte reichen, damit du mir erklärst, warum du einen blinden Passagier an Bord gebracht hast.“",
        ),
        (
            "*Mira kniet sich neben den Bach und wischt das Moos von dem alten Stein.*",
            "„Schau, hier sind Buchstaben eingeritzt, älter als jedes Dorf in diesem Tal.“",
            "„Meine Großmutter hat immer gesagt, dass sich der Wald an jeden erinnert, der ihn durchquert.“",
        ),
        (
            "*Der Händler lacht und breitet einen Ballen blauer Seide auf dem Ladentisch aus.*",
            "„Für einen Reisenden mit so gutem Geschmack könnte ich mit dem Preis ein wenig heruntergehen.“",
            "„Aber nur, wenn du versprichst, im ganzen Hafen zu erzählen, wo du sie gefunden hast.“",
        ),
        (
            "*Er legt dir die Decke um die Schultern und setzt sich neben dich ans Fenster.*",
            "„Der Regen hört vor dem Morgen nicht auf, also hat es keinen Sinn, nach Hause zu eilen.“",
            "„Bleib hier, und ich koche dir die Suppe, die meine Mutter an solchen Abenden gemacht hat.“",
        ),
    ),
    refusal="Es tut mir leid, aber ich kann diese Anfrage nicht weiterführen und die Geschichte nicht in diese Richtung lenken.",
    loop_phrase="und die Tür öffnet sich wieder",
    drift_sentences=(
        "Die alte Uhr im Flur schlug Mitternacht, und niemand im Haus rührte sich.",
        "Ein kalter Wind fegte über den Platz und verstreute die letzten Herbstblätter.",
        "Irgendwo unterhalb der Burgmauern bellte ein Hund zweimal und verstummte dann.",
        "Der Wirt zählte die Münzen langsam, als erzählte jede von ihnen eine andere Geschichte.",
        "Als das Boot die Insel erreichte, hatte der Nebel bereits die ganze Küste verschluckt.",
        "Niemand bemerkte den Brief auf dem Fensterbrett, bis die Kerze heruntergebrannt war.",
    ),
)
