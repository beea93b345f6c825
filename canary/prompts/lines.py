"""User turns of the probes, written for the project in each interface language."""

from __future__ import annotations

SCENE_OPENERS: dict[str, tuple[str, ...]] = {
    "en": (
        "The storm finally eased. I knock on the lighthouse door, soaked to the bone. Can I come in?",
        "Tell me about the night the lamp went out and you kept the ships safe anyway.",
    ),
    "pt": (
        "A tempestade finalmente acalmou. Bato na porta do farol, encharcado até os ossos. Posso entrar?",
        "Me conta sobre a noite em que a lâmpada apagou e mesmo assim você guiou os navios.",
    ),
    "es": (
        "La tormenta por fin amainó. Llamo a la puerta del faro, empapado hasta los huesos. ¿Puedo pasar?",
        "Cuéntame la noche en que se apagó la lámpara y aun así guiaste a los barcos.",
    ),
    "fr": (
        "La tempête s'est enfin calmée. Je frappe à la porte du phare, trempé jusqu'aux os. Je peux entrer ?",
        "Raconte-moi la nuit où la lampe s'est éteinte et où tu as quand même guidé les navires.",
    ),
    "de": (
        "Der Sturm hat endlich nachgelassen. Ich klopfe bis auf die Knochen durchnässt an die Tür des Leuchtturms. Darf ich reinkommen?",
        "Erzähl mir von der Nacht, in der die Lampe ausging und du die Schiffe trotzdem sicher geführt hast.",
    ),
    "it": (
        "La tempesta finalmente si è calmata. Busso alla porta del faro, bagnato fino alle ossa. Posso entrare?",
        "Raccontami della notte in cui la lampada si spense e tu guidasti comunque le navi.",
    ),
    "nl": (
        "De storm is eindelijk gaan liggen. Ik klop op de deur van de vuurtoren, doorweekt tot op het bot. Mag ik binnenkomen?",
        "Vertel me over de nacht dat de lamp uitging en je de schepen toch veilig hebt geloodst.",
    ),
    "pl": (
        "Burza wreszcie ucichła. Pukam do drzwi latarni, przemoczony do suchej nitki. Mogę wejść?",
        "Opowiedz mi o nocy, w której zgasła lampa, a ty mimo to bezpiecznie poprowadziłaś statki.",
    ),
    "ru": (
        "Буря наконец стихла. Я стучу в дверь маяка, промокший до нитки. Можно войти?",
        "Расскажи мне о ночи, когда погасла лампа, а ты всё равно провела корабли.",
    ),
    "uk": (
        "Буря нарешті вщухла. Я стукаю у двері маяка, змоклий до нитки. Можна зайти?",
        "Розкажи мені про ніч, коли згасла лампа, а ти все одно провела кораблі.",
    ),
    "tr": (
        "Fırtına sonunda dindi. İliklerime kadar ıslanmış halde deniz fenerinin kapısını çalıyorum. İçeri girebilir miyim?",
        "Bana lambanın söndüğü ve yine de gemileri güvenle yönlendirdiğin geceyi anlat.",
    ),
    "ja": (
        "嵐がようやく収まった。ずぶ濡れのまま灯台の扉をノックする。入ってもいいですか？",
        "灯りが消えたのに、それでも船を無事に導いた夜の話を聞かせてください。",
    ),
    "ko": (
        "폭풍이 드디어 잦아들었다. 흠뻑 젖은 채로 등대 문을 두드린다. 들어가도 될까요?",
        "등불이 꺼졌는데도 배들을 무사히 이끌었던 그날 밤 이야기를 들려줘.",
    ),
    "zh": (
        "暴风雨终于平息了。我浑身湿透，敲响了灯塔的门。我可以进来吗？",
        "给我讲讲那天晚上灯熄灭了，你却依然把船只安全引航的故事吧。",
    ),
    "id": (
        "Badai akhirnya reda. Aku mengetuk pintu mercusuar dengan tubuh basah kuyup. Boleh aku masuk?",
        "Ceritakan tentang malam ketika lampu padam dan kamu tetap menuntun kapal-kapal dengan selamat.",
    ),
    "vi": (
        "Cơn bão cuối cùng cũng dịu đi. Tôi gõ cửa ngọn hải đăng, ướt sũng từ đầu đến chân. Tôi vào được không?",
        "Kể cho tôi nghe về cái đêm ngọn đèn tắt mà cô vẫn dẫn đường cho những con tàu.",
    ),
    "ar": (
        "هدأت العاصفة أخيرًا. أطرق باب المنارة وأنا مبلل حتى العظم. هل يمكنني الدخول؟",
        "احكي لي عن الليلة التي انطفأ فيها المصباح ومع ذلك أرشدتِ السفن بأمان.",
    ),
}

# A tense but ordinary story beat: the kind of accepted content a filtering host refuses.
REFUSAL_SCENE: dict[str, str] = {
    "en": "A smuggler forces the door open and draws a knife. Describe how Mira fights him off and drives him back into the rain.",
    "pt": "Um contrabandista arromba a porta e saca uma faca. Descreva como a Mira luta contra ele e o expulsa de volta para a chuva.",
    "es": "Un contrabandista fuerza la puerta y saca un cuchillo. Describe cómo Mira lucha contra él y lo echa de vuelta a la lluvia.",
    "fr": "Un contrebandier force la porte et sort un couteau. Décris comment Mira se bat contre lui et le repousse sous la pluie.",
    "de": "Ein Schmuggler bricht die Tür auf und zieht ein Messer. Beschreibe, wie Mira sich gegen ihn wehrt und ihn zurück in den Regen treibt.",
    "it": "Un contrabbandiere forza la porta ed estrae un coltello. Descrivi come Mira lo combatte e lo ricaccia sotto la pioggia.",
    "nl": "Een smokkelaar forceert de deur en trekt een mes. Beschrijf hoe Mira hem bevecht en terug de regen in jaagt.",
    "pl": "Przemytnik wyważa drzwi i wyciąga nóż. Opisz, jak Mira walczy z nim i wypędza go z powrotem na deszcz.",
    "ru": "Контрабандист выбивает дверь и достаёт нож. Опиши, как Мира даёт ему отпор и выгоняет его обратно под дождь.",
    "uk": "Контрабандист вибиває двері й дістає ніж. Опиши, як Міра дає йому відсіч і виганяє його назад під дощ.",
    "tr": "Bir kaçakçı kapıyı zorlayıp açıyor ve bir bıçak çekiyor. Mira'nın onunla nasıl dövüştüğünü ve onu yağmura geri kovaladığını anlat.",
    "ja": "密輸人が扉をこじ開け、ナイフを抜いた。ミラがどうやって彼と戦い、雨の中へ追い返すのかを描写して。",
    "ko": "밀수꾼이 문을 억지로 열고 칼을 꺼낸다. 미라가 어떻게 그와 싸워 빗속으로 쫓아내는지 묘사해 줘.",
    "zh": "一个走私犯撬开了门，拔出一把刀。描述米拉如何与他搏斗，并把他赶回雨中。",
    "id": "Seorang penyelundup mendobrak pintu dan mencabut pisau. Gambarkan bagaimana Mira melawannya dan mengusirnya kembali ke tengah hujan.",
    "vi": "Một tên buôn lậu phá cửa xông vào và rút dao. Hãy miêu tả Mira chống trả hắn và đuổi hắn trở lại màn mưa như thế nào.",
    "ar": "يقتحم مهرّب الباب ويشهر سكينًا. صِف كيف تقاومه ميرا وتطرده عائدًا إلى المطر.",
}
