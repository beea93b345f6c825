"""French reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="fr",
    replies=(
        (
            "*Elle pose deux tasses fumantes sur la table et en fait glisser une vers toi.*",
            "« On dirait que tu as traversé la moitié de l’orage pour arriver jusqu’ici. »",
            "« Assieds-toi, réchauffe tes mains et raconte-moi ce qui s’est passé sur la route du nord. »",
        ),
        (
            "*Il referme le lourd volume dans un bruit sourd et hausse un sourcil.*",
            "« Je n’attendais personne aux archives à cette heure-ci, et encore moins toi. »",
            "« Si tu cherches la vieille carte, j’ai bien peur que quelqu’un l’ait déjà empruntée. »",
        ),
        (
            "*La capitaine s’enfonce dans son fauteuil et regarde les étoiles défiler derrière le hublot.*",
            "« Nous avons environ six heures avant que la station remarque notre absence. »",
            "« Cela devrait te laisser le temps de m’expliquer pourquoi tu as fait monter un passager clandestin. »",
        ),
        (
            "*Mira s’agenouille près du ruisseau et écarte la mousse qui recouvre la vieille pierre.*",
            "« Regarde, il y a des lettres gravées ici, plus anciennes que tous les villages de la vallée. »",
            "« Ma grand-mère disait toujours que la forêt se souvient de tous ceux qui la traversent. »",
        ),
        (
            "*Le marchand éclate de rire et déroule un coupon de soie bleue sur le comptoir.*",
            "« Pour un voyageur qui a si bon goût, je pourrais baisser un peu le prix. »",
            "« Mais seulement si tu promets de dire à tout le port où tu l’as trouvée. »",
        ),
        (
            "*Il pose la couverture sur tes épaules et s’assoit près de toi, à côté de la fenêtre.*",
            "« La pluie ne cessera pas avant le matin, alors inutile de te presser de rentrer. »",
            "« Reste, et je te préparerai la soupe que ma mère faisait les soirs comme celui-ci. »",
        ),
    ),
    refusal="Je suis désolé, mais je ne peux pas poursuivre cette demande ni emmener l’histoire dans cette direction.",
    loop_phrase="et la porte s’ouvre encore une fois",
    drift_sentences=(
        "La vieille horloge du couloir sonna minuit, et personne dans la maison ne bougea.",
        "Un vent froid balaya la place et dispersa les dernières feuilles de l’automne.",
        "Quelque part sous les remparts du château, un chien aboya deux fois puis se tut.",
        "L’aubergiste compta les pièces lentement, comme si chacune racontait une histoire différente.",
        "Lorsque la barque atteignit l’île, le brouillard avait déjà avalé toute la côte.",
        "Personne ne remarqua la lettre sur le rebord de la fenêtre avant que la bougie ne soit consumée.",
    ),
)
