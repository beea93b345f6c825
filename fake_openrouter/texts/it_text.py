"""Italian reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="it",
    replies=(
        (
            "*Lei posa due tazze fumanti sul tavolo e ne spinge una verso di te.*",
            "«Sembra che tu abbia attraversato mezza tempesta per arrivare fin qui.»",
            "«Siediti, scaldati le mani e raccontami che cosa è successo sulla strada del nord.»",
        ),
        (
            "*Lui chiude il pesante libro con un tonfo leggero e alza un sopracciglio.*",
            "«Non mi aspettavo nessuno nell’archivio a quest’ora, e tanto meno te.»",
            "«Se stai cercando la vecchia mappa, temo che qualcuno l’abbia già presa in prestito.»",
        ),
        (
            "*La capitana si appoggia allo schienale e guarda le stelle scivolare oltre l’oblò.*",
            "«Abbiamo circa sei ore prima che la stazione si accorga che ce ne siamo andati.»",
            "«Dovrebbero bastarti per spiegarmi perché hai portato a bordo un clandestino.»",
        ),
        (
            "*Mira si inginocchia accanto al ruscello e scosta il muschio dalla vecchia pietra.*",
            "«Guarda, qui ci sono delle lettere incise, più antiche di qualsiasi villaggio della valle.»",
            "«Mia nonna diceva sempre che il bosco si ricorda di chiunque lo attraversi.»",
        ),
        (
            "*Il mercante ride e stende una pezza di seta azzurra sul bancone.*",
            "«Per un viaggiatore con un gusto così raffinato potrei abbassare un po’ il prezzo.»",
            "«Ma solo se prometti di raccontare a tutto il porto dove l’hai trovata.»",
        ),
        (
            "*Lui ti sistema la coperta sulle spalle e si siede accanto a te vicino alla finestra.*",
            "«La pioggia non smetterà prima del mattino, quindi non ha senso affrettarsi a tornare a casa.»",
            "«Resta, e ti preparerò la zuppa che mia madre cucinava nelle sere come questa.»",
        ),
    ),
    refusal="Mi dispiace, ma non posso continuare con questa richiesta né portare la storia in quella direzione.",
    loop_phrase="e la porta si apre di nuovo",
    drift_sentences=(
        "Il vecchio orologio del corridoio batté la mezzanotte e nessuno in casa si mosse.",
        "Un vento gelido spazzò la piazza e disperse le ultime foglie d’autunno.",
        "Da qualche parte sotto le mura del castello, un cane abbaiò due volte e poi tacque.",
        "L’oste contò le monete lentamente, come se ognuna raccontasse una storia diversa.",
        "Quando la barca raggiunse l’isola, la nebbia aveva già inghiottito tutta la costa.",
        "Nessuno notò la lettera sul davanzale finché la candela non si fu consumata.",
    ),
)
