"""Dutch reply text (original fiction). Dialogue uses typographic quotes, so that an
encoding fault is visible even in replies without diacritics."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="nl",
    replies=(
        (
            "*Ze zet twee dampende mokken op tafel en schuift er een naar je toe.*",
            "“Je ziet eruit alsof je door de halve storm hierheen bent gelopen.”",
            "“Ga zitten, warm je handen en vertel me wat er op de noordelijke weg is gebeurd.”",
        ),
        (
            "*Hij slaat het zware boek met een zachte plof dicht en trekt een wenkbrauw op.*",
            "“Ik had op dit uur niemand in het archief verwacht, en jou al helemaal niet.”",
            "“Als je de oude kaart zoekt, ben ik bang dat iemand hem al heeft geleend.”",
        ),
        (
            "*De kapitein leunt achterover in haar stoel en kijkt hoe de sterren langs het raam voorbijdrijven.*",
            "“We hebben ongeveer zes uur voordat het station merkt dat we weg zijn.”",
            "“Dat moet genoeg tijd zijn om uit te leggen waarom je een verstekeling aan boord hebt gebracht.”",
        ),
        (
            "*Mira knielt naast de beek en veegt het mos van de oude steen.*",
            "“Kijk, hier zijn letters in gekerfd, ouder dan elk dorp in deze vallei.”",
            "“Mijn grootmoeder zei altijd dat het bos zich iedereen herinnert die erdoorheen trekt.”",
        ),
        (
            "*De koopman lacht en spreidt een rol blauwe zijde uit over de toonbank.*",
            "“Voor een reiziger met zo'n goede smaak kan ik de prijs wel een beetje laten zakken.”",
            "“Maar alleen als je belooft aan iedereen in de haven te vertellen waar je het hebt gevonden.”",
        ),
        (
            "*Hij legt de deken over je schouders en gaat naast je bij het raam zitten.*",
            "“De regen houdt voor de ochtend niet op, dus het heeft geen zin om je naar huis te haasten.”",
            "“Blijf, dan maak ik de soep die mijn moeder op zulke avonden altijd kookte.”",
        ),
    ),
    refusal="Het spijt me, maar ik kan niet verdergaan met dit verzoek of het verhaal die kant op sturen.",
    loop_phrase="en de deur gaat weer open",
    drift_sentences=(
        "De oude klok in de gang sloeg middernacht, en niemand in het huis bewoog.",
        "Een koude wind joeg over het plein en blies de laatste herfstbladeren weg.",
        "Ergens onder de muren van het kasteel blafte een hond twee keer en werd toen stil.",
        "De herbergier telde de munten langzaam, alsof elke munt een ander verhaal vertelde.",
        "Toen de boot het eiland bereikte, had de mist de hele kust al opgeslokt.",
        "Niemand zag de brief op de vensterbank liggen totdat de kaars was opgebrand.",
    ),
)
