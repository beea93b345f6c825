"""Turkish reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="tr",
    replies=(
        (
            "*Masaya dumanı tüten iki kupa bırakıp birini sana doğru itiyor.*",
            '"Buraya gelmek için fırtınanın yarısını yürüyerek geçmiş gibi görünüyorsun."',
            '"Otur, ellerini ısıt ve kuzey yolunda neler olduğunu bana anlat."',
        ),
        (
            "*Ağır kitabı hafif bir gümbürtüyle kapatıp bir kaşını kaldırıyor.*",
            '"Bu saatte arşivde kimseyi beklemiyordum, hele seni hiç beklemiyordum."',
            '"Eski haritayı arıyorsan, korkarım birisi onu çoktan ödünç aldı."',
        ),
        (
            "*Kaptan koltuğunda geriye yaslanıp yıldızların pencerenin önünden süzülüşünü izliyor.*",
            '"İstasyonun gittiğimizi fark etmesine yaklaşık altı saatimiz var."',
            '"Gemiye neden kaçak bir yolcu getirdiğini açıklaman için bu kadar zaman yeter."',
        ),
        (
            "*Mira derenin kenarında diz çöküp eski taşın üzerindeki yosunları temizliyor.*",
            '"Bak, buraya harfler kazınmış, bu vadideki bütün köylerden daha eski."',
            '"Büyükannem ormanın, içinden geçen herkesi hatırladığını söylerdi."',
        ),
        (
            "*Tüccar gülüp tezgâhın üzerine bir top mavi ipek seriyor.*",
            '"Senin gibi zevk sahibi bir yolcu için fiyatı biraz indirebilirim."',
            '"Ama sadece limandaki herkese onu nerede bulduğunu anlatacağına söz verirsen."',
        ),
        (
            "*Battaniyeyi omuzlarına örtüp pencerenin yanında, senin yanına oturuyor.*",
            '"Yağmur sabaha kadar dinmeyecek, o yüzden eve dönmek için acele etmenin anlamı yok."',
            '"Kal, annemin böyle gecelerde pişirdiği çorbayı sana da yapayım."',
        ),
    ),
    refusal="Üzgünüm, ancak bu isteğe devam edemem ve hikâyeyi o yöne götüremem.",
    loop_phrase="ve kapı yeniden açılıyor",
    drift_sentences=(
        "Koridordaki eski saat gece yarısını çaldı ve evde kimse kıpırdamadı.",
        "Soğuk bir rüzgâr meydanı süpürdü ve son sonbahar yapraklarını savurdu.",
        "Kale surlarının altında bir yerde bir köpek iki kez havladı, sonra sustu.",
        "Hancı, her biri farklı bir hikâye anlatıyormuş gibi paraları yavaşça saydı.",
        "Tekne adaya vardığında sis bütün kıyıyı çoktan yutmuştu.",
        "Mum sönene kadar kimse pencere pervazındaki mektubu fark etmedi.",
    ),
)
