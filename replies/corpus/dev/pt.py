"""Portuguese reply phrasings (Brazilian and European), development set (second author; never used for training)."""

INTERESTED = [
    "Tenho interesse sim. Vocês emitem nota fiscal aqui no Brasil? Se sim, podemos conversar.",
    "Fechado, {day} às {time} funciona pra mim. Manda o convite.",
    "Qual o valor pra uma equipe de uns 20 usuários? Se fizer sentido, a gente avança.",
    "Sinceramente não estou convencido. O que vocês fazem de diferente do {comp}?",
    "Integra com o Outlook e com o Teams? E os dados ficam armazenados onde, no Brasil?",
    "Estou copiando a {colleague}, nossa {role}, que cuida disso aqui. {colleague}, acho que vale a pena dar uma olhada.",
    "Agora está corrido, mas me procura em {month} que a gente conversa.",
    "Talvez, depende do preço e do prazo de fidelidade.",
    "Boa tarde, parece-me interessante. Podemos marcar uma reunião na próxima semana?",
    "Provavelmente não é pra gente, mas só por curiosidade: quanto custa?",
    "O nosso contrato com o {comp} termina em {month}. Entre em contacto umas semanas antes e comparamos.",
    "opa, bora marcar! qua ou qui de tarde?",
]

NOT_INTERESTED = [
    "Obrigado, mas não temos interesse.",
    "Já resolvemos isso com uma ferramenta interna.",
    "Acabamos de assinar com o {comp} por três anos.",
    "Tá puxado aqui, zero verba pra isso. Fica pra próxima.",
    "Não é prioridade no momento.",
    "Valeu, mas não rola.",
    "Não precisa mandar proposta, já estamos bem servidos com o {comp}.",
    "Quarto e-mail... Admiro a persistência, mas continua sendo não.",
    "Por enquanto não. Se precisarmos, a gente te procura.",
    "Ah claro, mais uma ferramenta milagrosa. Passo, valeu.",
    "Falei com a {colleague} e decidimos não seguir em frente.",
    "Não, obrigada. Já experimentámos algo parecido e não resultou.",
]

UNSUBSCRIBE = [
    "Favor me remover do mailing.",
    "Não tenho interesse. Apaguem o meu e-mail da vossa base de dados.",
    "Já falei que não. Para de me mandar e-mail, por favor.",
    "Onde conseguiram os meus dados? Com base na LGPD, solicito a exclusão de todas as minhas informações.",
    "PAREM DE ME MANDAR E-MAIL.",
    "descadastrar",
    "Já não trabalho na {company}, por favor removam este endereço das vossas listas.",
    "Se eu receber mais um e-mail vou denunciar como spam. Chega.",
    "Nada pessoal, mas me tira dessa sequência. Se um dia precisarmos, eu entro em contato.",
    "Solicito a remoção do meu endereço da vossa lista de contactos, ao abrigo do RGPD.",
]

OTHER = [
    "Vocês são de qual empresa mesmo?",
    "Como conseguiu o meu contato?",
    "Não sou a pessoa certa, fale com o setor de compras.",
    "Favor enviar para contato@{company}.com.br.",
    "Vou repassar pra área responsável.",
    "Obrigado.",
    "Ciente.",
    "ok",
    "O link do e-mail está quebrado.",
    "É mensagem automática ou tem alguém aí do outro lado?",
    "Acho que errou de empresa, somos uma padaria.",
    "Desculpa, a gente se conhece? Não entendi do que se trata.",
    "Incluindo a {colleague} em cópia para ciência.",
    "Já não estou nessa função, agora quem trata disso é o {colleague}.",
    "Acho que isso não era pra mim, sou só o estagiário.",
]

OUT_OF_OFFICE = [
    "Olá! Estou de férias até {day}, sem acesso ao e-mail. Se for urgente, fale com {colleague}: {colleague}@{company}.com.br.",
    "Encontro-me de licença parental até {month}. A sua mensagem não será reencaminhada.",
    "{colleague} não faz mais parte da {company}. Por favor, envie sua mensagem para contato@{company}.com.br.",
    "Esta caixa de correio não é monitorizada. Por favor, não responda a este e-mail.",
    "Encontro-me em viagem de serviço até {day}, com acesso limitado ao correio eletrónico. Para assuntos de faturação, contacte faturacao@{company}.pt.",
    "Resposta automática: estou de atestado médico e retorno em breve.",
    "Nosso escritório estará fechado devido ao feriado. Retornamos no dia {day}.",
    "Obrigado pelo contato. Sua solicitação foi registrada sob o protocolo nº 20391 e será respondida em até 2 dias úteis.",
]
