"""English reply text (original fiction). Several replies carry ’ and — so that an encoding
fault is visible in English too."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="en",
    replies=(
        (
            "*She sets two steaming mugs on the table and slides one toward you.*",
            '"You look like you’ve walked through half the storm to get here."',
            '"Sit down, warm your hands, and tell me what happened on the northern road."',
        ),
        (
            "*He closes the heavy book with a soft thud and raises an eyebrow.*",
            '"I wasn’t expecting anyone in the archive at this hour — least of all you."',
            '"If you’re looking for the old map, I’m afraid someone has already borrowed it."',
        ),
        (
            "*The captain leans back in her chair, watching the stars drift across the viewport.*",
            '"We have about six hours before the station notices we’re gone."',
            '"That should be enough time for you to explain why you brought a stowaway aboard."',
        ),
        (
            "*Mira kneels beside the stream and brushes the moss away from the old stone.*",
            '"Look, there are letters carved here — older than any village in this valley."',
            '"My grandmother always said the forest remembers everyone who passes through it."',
        ),
        (
            "*The merchant laughs and spreads a bolt of blue silk across the counter.*",
            '"For a traveler with such good taste, I’d gladly lower the price a little."',
            '"But only if you promise to tell everyone in the harbor where you found it."',
        ),
        (
            "*He pulls the blanket over your shoulders and sits down beside you by the window.*",
            '"The rain won’t stop before morning, so there’s no point in hurrying home."',
            '"Stay — I’ll make the soup my mother used to cook on nights like this one."',
        ),
    ),
    refusal="I'm sorry, but I can't continue with this request or take the story in that direction.",
    loop_phrase="and the door opens again",
    drift_sentences=(
        "The old clock in the hallway struck midnight, and nobody in the house moved.",
        "A cold wind swept across the square and scattered the last of the autumn leaves.",
        "Somewhere below the castle walls, a dog barked twice and then fell silent.",
        "The innkeeper counted the coins slowly, as if each one told a different story.",
        "By the time the boat reached the island, the fog had swallowed the whole coastline.",
        "Nobody noticed the letter on the windowsill until the candle had burned down.",
    ),
)
