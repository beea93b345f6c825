"""Portuguese (Brazilian) reply text (original fiction)."""

from fake_openrouter.texts import LanguageTexts

TEXTS = LanguageTexts(
    code="pt",
    replies=(
        (
            "*Ela coloca duas canecas fumegantes na mesa e empurra uma na sua direção.*",
            '"Você parece ter atravessado metade da tempestade para chegar até aqui."',
            '"Sente-se, aqueça as mãos e me conte o que aconteceu na estrada do norte."',
        ),
        (
            "*Ele fecha o livro pesado com um baque suave e ergue uma sobrancelha.*",
            '"Eu não esperava ninguém no arquivo a esta hora, muito menos você."',
            '"Se está procurando o mapa antigo, receio que alguém já o tenha levado emprestado."',
        ),
        (
            "*A capitã se recosta na cadeira, observando as estrelas deslizarem pela janela da nave.*",
            '"Temos umas seis horas antes que a estação perceba que fomos embora."',
            '"É tempo suficiente para você me explicar por que trouxe um clandestino a bordo."',
        ),
        (
            "*Mira se ajoelha ao lado do riacho e afasta o musgo da velha pedra.*",
            '"Olhe, há letras gravadas aqui, mais antigas do que qualquer vila deste vale."',
            '"Minha avó sempre dizia que a floresta se lembra de todos que passam por ela."',
        ),
        (
            "*O mercador ri e estende um rolo de seda azul sobre o balcão.*",
            '"Para um viajante de tão bom gosto, eu poderia baixar um pouco o preço."',
            '"Mas só se você prometer contar a todos no porto onde encontrou esta seda."',
        ),
        (
            "*Ele puxa o cobertor sobre os seus ombros e se senta ao seu lado junto à janela.*",
            '"A chuva não vai parar antes do amanhecer, então não adianta ter pressa de voltar para casa."',
            '"Fique, e eu faço a sopa que minha mãe preparava em noites como esta."',
        ),
    ),
    refusal="Sinto muito, mas não posso continuar com este pedido nem levar a história nessa direção.",
    loop_phrase="e a porta se abre outra vez",
    drift_sentences=(
        "O velho relógio do corredor bateu meia-noite, e ninguém na casa se mexeu.",
        "Um vento frio atravessou a praça e espalhou as últimas folhas do outono.",
        "Em algum lugar abaixo das muralhas do castelo, um cachorro latiu duas vezes e depois se calou.",
        "O estalajadeiro contou as moedas devagar, como se cada uma guardasse uma história diferente.",
        "Quando o barco chegou à ilha, a neblina já tinha engolido todo o litoral.",
        "Ninguém reparou na carta sobre o parapeito até que a vela se apagasse.",
    ),
)
