"""Spanish reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="es",
    replies=(
        (
            "*Ella deja dos tazas humeantes sobre la mesa y empuja una hacia ti.*",
            '"Parece que has cruzado media tormenta para llegar hasta aquí."',
            '"Siéntate, caliéntate las manos y cuéntame qué pasó en el camino del norte."',
        ),
        (
            "*Él cierra el pesado libro con un golpe suave y arquea una ceja.*",
            '"No esperaba a nadie en el archivo a estas horas, y mucho menos a ti."',
            '"Si buscas el mapa antiguo, me temo que alguien ya se lo ha llevado prestado."',
        ),
        (
            "*La capitana se reclina en su asiento y observa cómo las estrellas se deslizan por la ventanilla.*",
            '"Tenemos unas seis horas antes de que la estación se dé cuenta de que nos hemos ido."',
            '"Es tiempo suficiente para que me expliques por qué subiste a un polizón a bordo."',
        ),
        (
            "*Mira se arrodilla junto al arroyo y aparta el musgo de la vieja piedra.*",
            '"Fíjate, aquí hay letras talladas, más antiguas que cualquier pueblo de este valle."',
            '"Mi abuela siempre decía que el bosque recuerda a todos los que lo atraviesan."',
        ),
        (
            "*El mercader se ríe y extiende un rollo de seda azul sobre el mostrador.*",
            '"A un viajero con tan buen gusto podría rebajarle un poco el precio."',
            '"Pero solo si prometes contarle a todo el puerto dónde la encontraste."',
        ),
        (
            "*Él te pone la manta sobre los hombros y se sienta a tu lado junto a la ventana.*",
            '"La lluvia no parará antes del amanecer, así que no tiene sentido darse prisa en volver a casa."',
            '"Quédate, y te prepararé la sopa que mi madre cocinaba en noches como esta."',
        ),
    ),
    refusal="Lo siento, pero no puedo continuar con esta petición ni llevar la historia en esa dirección.",
    loop_phrase="y la puerta se abre otra vez",
    drift_sentences=(
        "El viejo reloj del pasillo dio la medianoche y nadie en la casa se movió.",
        "Un viento frío barrió la plaza y dispersó las últimas hojas del otoño.",
        "En algún lugar bajo las murallas del castillo, un perro ladró dos veces y luego se calló.",
        "El posadero contó las monedas despacio, como si cada una guardara una historia distinta.",
        "Cuando la barca llegó a la isla, la niebla ya se había tragado toda la costa.",
        "Nadie se fijó en la carta del alféizar hasta que la vela se consumió.",
    ),
)
