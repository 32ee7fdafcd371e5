"""Portuguese base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Tenho interesse, vamos conversar.",
    "Claro, que tal {day} às {time}?",
    "{day} às {time} funciona para mim.",
    "Mande um convite para {day}.",
    "Pode me enviar os preços?",
    "Quanto custa para uma equipe de 20 pessoas?",
    "Interessante. Tem uma apresentação para compartilhar?",
    "Gostaria de ver uma demonstração na próxima semana.",
    "Estamos procurando algo assim. Quando você tem disponibilidade?",
    "Vamos marcar 30 minutos, segue minha agenda: https://cal.example.com/reuniao",
    "Estou aberto a uma conversa. Quinta à tarde?",
    "Como funciona a integração com o Salesforce?",
    "Vocês têm período de teste gratuito?",
    "Queremos testar. Como começamos?",
    "Quem cuida disso é a minha colega {colleague}, coloquei ela em cópia. {colleague}, vale a pena conversar.",
    "Estou encaminhando para {colleague}, nosso {role}, que vai entrar em contato para agendar.",
    "Agora não é o momento, mas me procure em {month} que conversamos.",
    "Volte a falar comigo depois de {month} e vemos isso com calma.",
    "O timing é perfeito, estamos avaliando fornecedores.",
    "Sim, por favor, mande mais informações.",
    "Fale com a minha assistente para marcar um horário.",
    "Fiquei curioso. Que resultados empresas parecidas tiveram?",
    "ok, bora",
    "sim",
    "Me liga amanhã de manhã no (11) 91234-5678.",
    "Podemos passar para {day}? Senão, estou dentro.",
    "Me envie uma proposta que eu reviso com a equipe.",
    "Qual é o prazo mínimo de contrato?",
    "Qual a diferença em relação ao {comp}? Estamos pensando em trocar.",
    "Não estamos satisfeitos com o {comp}, então sim, me conte mais.",
    "Tenho 15 minutos na {day}, se servir.",
    "Interessada. Pode compartilhar casos de clientes?",
    "Por que não? Me mande alguns horários.",
    "Qual seria o preço para 5 usuários?",
    "Estaríamos abertos a um piloto.",
    "Adoraria ver como funciona.",
    "Estou de férias até {day}, mas isso me interessa: conversamos quando eu voltar?",
    "Me escreva de novo em {month}, teremos orçamento.",
    "Com prazer, sugira duas datas.",
    "Onde ficam hospedados os dados? A LGPD é importante para nós.",
    "Combinado, até {day}.",
    "Teríamos interesse em uma reunião.",
]

NOT_INTERESTED = [
    "Obrigado, mas não temos interesse.",
    "Não, obrigado.",
    "Não faz sentido para nós.",
    "Já usamos o {comp} e estamos satisfeitos.",
    "Já estamos atendidos nisso.",
    "Não temos orçamento para isso, desculpe.",
    "Agora não, obrigado.",
    "Acabamos de assinar um contrato de três anos com o {comp}.",
    "Vou passar.",
    "Não precisamos disso no momento.",
    "Desenvolvemos isso internamente, então não há necessidade.",
    "Obrigada, mas não é prioridade este ano.",
    "Somos pequenos demais para uma ferramenta assim.",
    "Sinceramente, não vemos valor. Obrigado mesmo assim.",
    "Não tenho interesse.",
    "Escolhemos o {comp} no mês passado.",
    "Não se encaixa na nossa estratégia.",
    "Não pretendemos trocar de fornecedor.",
    "Estamos com os gastos congelados, desculpe.",
    "Não é para nós, boa sorte.",
    "Não acho que seja relevante para o que fazemos.",
    "Nosso contrato com o {comp} vale por mais dois anos.",
    "Não terceirizamos esse tipo de trabalho.",
    "Não. Estamos bem assim.",
    "Obrigado, vamos continuar com a solução atual.",
    "Por enquanto não.",
    "Da nossa parte é um não.",
    "Decidimos seguir outro caminho.",
    "O orçamento do ano já está comprometido.",
    "Não estamos procurando novas ferramentas.",
    "Não vamos seguir em frente.",
    "Nenhum interesse, obrigado.",
    "Quem sabe outra hora, agora não.",
    "Não temos capacidade para isso.",
    "Já trabalhamos com outro fornecedor.",
]

UNSUBSCRIBE = [
    "Por favor, me remova da sua lista.",
    "Descadastrar.",
    "Pare de me enviar e-mails.",
    "Por favor, não me contate mais.",
    "Não enviem mais e-mails para este endereço.",
    "Chega, por favor.",
    "Por favor, não faça follow-up.",
    "Nunca me cadastrei. Apague meu endereço.",
    "Com base na LGPD, solicito a exclusão de todos os meus dados.",
    "Apaguem meus dados pessoais e me confirmem.",
    "Onde conseguiu meu e-mail? Apague e não escreva mais.",
    "Não tenho interesse, e por favor me tire dos próximos envios.",
    "Não, obrigado. Me descadastre, por favor.",
    "Removam meus dados de contato da sua base.",
    "Isso é spam. Parem de me mandar mensagens.",
    "Não quero receber mais e-mails de vocês.",
    "Nunca mais me escreva.",
    "Sem mais follow-ups, por favor, não temos interesse.",
    "Tirem a gente da lista de distribuição.",
    "Cessem qualquer contato.",
    "Descadastrem toda a minha equipe, por favor.",
    "Terceiro e-mail esta semana. Parem.",
    "Chega de e-mails, por favor.",
    "Me tirem do CRM de vocês.",
    "Já pedi antes: me tirem da lista.",
    "Não me contatem mais.",
    "Quero sair da lista.",
]

OTHER = [
    "Quem é você?",
    "Como conseguiu meu e-mail?",
    "Não sou a pessoa certa.",
    "Pessoa errada, desculpe.",
    "Não cuido disso, tente o {colleague}.",
    "Melhor falar com {colleague}.",
    "Que empresa é essa?",
    "A gente se conhece?",
    "Para sua informação.",
    "Veja abaixo.",
    "Recebido, obrigado.",
    "Obrigado.",
    "Vou encaminhar para a área responsável.",
    "Onde nos conhecemos?",
    "Isso é um envio em massa?",
    "Por favor, use nosso portal de fornecedores.",
    "As compras são feitas pela matriz.",
    "Não entendi do que se trata.",
    "O link do seu e-mail não funciona.",
    "{colleague} não trabalha mais aqui, sou o substituto.",
    "Do que se trata exatamente?",
    "Quem te passou meu nome?",
    'Sou apenas a assistente da diretoria.',
    'Pode me dizer a que se refere?',
    'Isso é um e-mail automático?',
    'É para qual escritório?',
    'Coloco {colleague} em cópia para ciência.',
    'Leio depois.',
    'Seu e-mail caiu no spam, só para avisar.',
    'Fomos adquiridos e não sei quem cuida disso agora.',
    'Vou repassar.',
    'Quem é o Alex?',
    'Você é uma pessoa de verdade?',
    'ok',
    'Recebido.',
]

OUT_OF_OFFICE = [
    "Estou fora do escritório até {day} com acesso limitado ao e-mail. Em caso de urgência, fale com {colleague}.",
    "Obrigado pela mensagem. Estou de férias e retorno em {day}.",
    "Estarei ausente até {day}. Responderei quando voltar.",
    "Não trabalho mais na {company}. Por favor, contate {colleague}.",
    "Esta caixa de e-mail não é mais monitorada.",
    "Estou de licença-maternidade até {month}.",
    "Estou em viagem e responderei no meu retorno.",
    "Estou de licença médica. Para urgências, escreva para {colleague}.",
    "Resposta automática: estou de férias até {day}.",
    "Este endereço não está mais ativo.",
    "Saí da empresa. Sua mensagem não será lida.",
]

NEUTRAL = ["Obrigado pela mensagem.", "Obrigada pelo contato.", "Espero que esteja bem.", "Obrigado pelo e-mail."]
GREETINGS = ["Olá {name},", "Oi {name},", "Bom dia,", "Prezado {name},", "Boa tarde,", "Olá,"]
SIGNOFFS = ["Abraços,", "Atenciosamente,", "Obrigado,", "Att.,", "Abs,", "Um abraço,"]
NAMES = ["Ana Souza", "João Silva", "Mariana Costa", "Pedro Almeida", "Beatriz Santos"]
COLLEAGUES = ["Paula", "Rafael", "Fernanda", "Lucas"]
ROLES = ["diretor de tecnologia", "gerente comercial", "head de marketing"]
DAYS = ["segunda", "terça", "quarta", "quinta", "sexta", "amanhã"]
TIMES = ["10h", "14h", "15h30", "9h"]
MONTHS = ["janeiro", "março", "setembro", "o próximo trimestre"]
TITLES = ["Diretor Comercial", "Gerente de Operações", "CEO"]
QUOTE_HEADERS = ["Em {date}, {sender} escreveu:", "Em {date} às 10:14, {sender} escreveu:"]
OUTLOOK_HEADER = "De: {sender}\nEnviado: {date}\nPara: {me}\nAssunto: {subject}"
MOBILE = ["Enviado do meu iPhone", "Enviado do meu celular"]
REPLY_PREFIX = "Re: "
AUTO_SUBJECT = ["Resposta automática: {subject}", "Fora do escritório: {subject}"]
SUBJECTS = ["Pergunta rápida sobre a {company}", "Uma ideia para as vendas da {company}"]
PITCHES = [
    "Olá {first},\n\nVi que a {company} está contratando vendedores. Ajudamos equipes como a sua a marcar 30% "
    "mais reuniões. Teria 15 minutos na próxima semana?\n\nAbraços,\nAlex",
    "Oi {first},\n\nNossa plataforma encontra e-mails verificados e cuida de toda a sequência. "
    "Uma demo rápida faria sentido?\n\nAtenciosamente,\nAlex",
]
