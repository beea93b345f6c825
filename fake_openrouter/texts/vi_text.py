"""Vietnamese reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="vi",
    replies=(
        (
            "*Cô đặt hai chiếc cốc bốc khói lên bàn rồi đẩy một chiếc về phía bạn.*",
            '"Trông bạn như vừa băng qua nửa cơn bão mới tới được đây vậy."',
            '"Ngồi xuống đi, sưởi ấm tay rồi kể cho tôi nghe chuyện gì đã xảy ra trên con đường phía bắc."',
        ),
        (
            "*Anh gập cuốn sách dày lại với một tiếng bộp khẽ và nhướng một bên mày.*",
            '"Tôi không ngờ lại có người trong kho lưu trữ vào giờ này, càng không ngờ đó là bạn."',
            '"Nếu bạn đang tìm tấm bản đồ cũ thì e là đã có người mượn mất rồi."',
        ),
        (
            "*Nữ thuyền trưởng ngả lưng ra ghế, ngắm nhìn những vì sao trôi qua ô cửa sổ.*",
            '"Chúng ta còn khoảng sáu tiếng trước khi trạm phát hiện ra chúng ta đã rời đi."',
            '"Chừng đó đủ để bạn giải thích vì sao lại đưa một kẻ đi lậu lên tàu."',
        ),
        (
            "*Mira quỳ xuống bên dòng suối và gạt lớp rêu khỏi phiến đá cổ.*",
            '"Nhìn này, có những chữ được khắc ở đây, còn lâu đời hơn bất kỳ ngôi làng nào trong thung lũng."',
            '"Bà tôi luôn nói rằng khu rừng nhớ tất cả những ai từng đi qua nó."',
        ),
        (
            "*Người lái buôn bật cười và trải một súc lụa xanh lên quầy.*",
            '"Với một lữ khách có con mắt tinh tường như vậy, tôi có thể bớt giá một chút."',
            '"Nhưng chỉ khi bạn hứa sẽ kể cho cả bến cảng biết bạn đã tìm thấy nó ở đâu."',
        ),
        (
            "*Anh khoác tấm chăn lên vai bạn rồi ngồi xuống cạnh bạn bên cửa sổ.*",
            '"Mưa sẽ không tạnh trước khi trời sáng, nên chẳng cần vội về nhà đâu."',
            '"Ở lại đi, tôi sẽ nấu món súp mà mẹ tôi hay nấu vào những đêm như thế này."',
        ),
    ),
    refusal="Xin lỗi, tôi không thể tiếp tục yêu cầu này hoặc đưa câu chuyện theo hướng đó.",
    loop_phrase="và cánh cửa lại mở ra",
    drift_sentences=(
        "Chiếc đồng hồ cũ ngoài hành lang điểm nửa đêm, nhưng không ai trong nhà nhúc nhích.",
        "Một cơn gió lạnh quét qua quảng trường và cuốn đi những chiếc lá thu cuối cùng.",
        "Đâu đó dưới chân tường thành, một con chó sủa hai tiếng rồi im bặt.",
        "Ông chủ quán trọ đếm từng đồng xu thật chậm, như thể mỗi đồng đều mang một câu chuyện riêng.",
        "Khi con thuyền cập đảo, sương mù đã nuốt trọn cả bờ biển.",
        "Không ai để ý đến lá thư trên bậu cửa sổ cho đến khi ngọn nến cháy hết.",
    ),
)
