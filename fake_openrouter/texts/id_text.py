"""Indonesian reply text (original fiction). Dialogue uses typographic quotes: Indonesian has
no diacritics, and an encoding fault must still be visible."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="id",
    replies=(
        (
            "*Dia meletakkan dua cangkir yang masih mengepul di atas meja dan menggeser satu ke arahmu.*",
            "“Kamu kelihatan seperti baru saja menerobos separuh badai supaya bisa sampai ke sini.”",
            "“Duduk dulu, hangatkan tanganmu, lalu ceritakan apa yang terjadi di jalan utara.”",
        ),
        (
            "*Dia menutup buku tebal itu dengan bunyi pelan dan mengangkat sebelah alisnya.*",
            "“Aku tidak menyangka ada orang di ruang arsip selarut ini, apalagi kamu.”",
            "“Kalau kamu mencari peta lama itu, sepertinya seseorang sudah meminjamnya.”",
        ),
        (
            "*Sang kapten bersandar di kursinya sambil memandangi bintang-bintang yang melintas di balik jendela.*",
            "“Kita punya sekitar enam jam sebelum stasiun sadar bahwa kita sudah pergi.”",
            "“Itu cukup waktu bagimu untuk menjelaskan kenapa kamu membawa penumpang gelap ke kapal.”",
        ),
        (
            "*Mira berlutut di tepi sungai kecil dan menyingkirkan lumut dari batu tua itu.*",
            "“Lihat, ada huruf-huruf yang terukir di sini, lebih tua daripada desa mana pun di lembah ini.”",
            "“Nenekku selalu bilang bahwa hutan mengingat setiap orang yang pernah melewatinya.”",
        ),
        (
            "*Pedagang itu tertawa dan membentangkan segulung sutra biru di atas meja dagangannya.*",
            "“Untuk pelancong dengan selera sebagus ini, aku bisa menurunkan harganya sedikit.”",
            "“Tapi hanya kalau kamu berjanji memberi tahu semua orang di pelabuhan di mana kamu menemukannya.”",
        ),
        (
            "*Dia menyelimuti bahumu dan duduk di sampingmu dekat jendela.*",
            "“Hujannya tidak akan berhenti sebelum pagi, jadi tidak ada gunanya buru-buru pulang.”",
            "“Tinggallah, nanti kubuatkan sup yang dulu selalu dimasak ibuku pada malam-malam seperti ini.”",
        ),
    ),
    refusal="Maaf, saya tidak dapat melanjutkan permintaan ini atau membawa cerita ke arah tersebut.",
    loop_phrase="dan pintu itu terbuka lagi",
    drift_sentences=(
        "Jam tua di lorong berdentang tengah malam, dan tak seorang pun di rumah itu bergerak.",
        "Angin dingin menyapu alun-alun dan menerbangkan daun-daun musim gugur yang terakhir.",
        "Di suatu tempat di bawah tembok kastel, seekor anjing menggonggong dua kali lalu terdiam.",
        "Pemilik penginapan menghitung koin-koin itu perlahan, seolah setiap koin menyimpan kisah yang berbeda.",
        "Ketika perahu tiba di pulau, kabut sudah menelan seluruh garis pantai.",
        "Tidak ada yang memperhatikan surat di ambang jendela sampai lilinnya habis terbakar.",
    ),
)
