"""French base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Ça m'intéresse, parlons-en.",
    "Avec plaisir, que diriez-vous de {day} à {time} ?",
    "{day} à {time}, ça me va.",
    "Envoyez-moi une invitation pour {day}.",
    "Pouvez-vous m'envoyer vos tarifs ?",
    "Combien cela coûte pour une équipe de 20 personnes ?",
    "Intéressant. Auriez-vous une présentation à partager ?",
    "Je veux bien voir une démo la semaine prochaine.",
    "On cherche justement ce genre de solution. Quand êtes-vous disponible ?",
    "Prenons 30 minutes, voici mon agenda : https://cal.example.com/rdv",
    "Je suis ouvert à un échange. Jeudi après-midi ?",
    "Comment ça s'intègre avec Salesforce ?",
    "Est-ce que vous gérez le SSO ?",
    "Combien de temps prend la mise en place ?",
    "Y a-t-il un essai gratuit ?",
    "Nous aimerions tester. Comment commencer ?",
    "C'est plutôt le sujet de {colleague}, je la mets en copie. {colleague}, ça vaut le coup d'en parler.",
    "Je transfère à {colleague}, notre {role}, qui vous recontactera pour fixer un rendez-vous.",
    "Ce n'est pas le bon moment, mais recontactez-moi en {month}, volontiers.",
    "Revenez vers moi après {month}, on regardera ça sérieusement.",
    "Le timing est parfait, on revoit nos fournisseurs ce trimestre.",
    "Oui, merci de m'envoyer plus d'informations.",
    "Voyez avec mon assistante pour caler un créneau.",
    "Je suis curieux. Quels résultats ont obtenu des entreprises similaires ?",
    "ok, allons-y",
    "oui",
    "Appelez-moi demain matin au 06 12 34 56 78.",
    "Peut-on décaler à {day} ? Sinon je suis partant.",
    "Envoyez-moi une proposition, je la relirai avec l'équipe.",
    "Quelle est la durée minimale d'engagement ?",
    "En quoi êtes-vous différents de {comp} ? On pourrait changer.",
    "Nous ne sommes pas satisfaits de {comp}, donc oui, dites-m'en plus.",
    "J'ai 15 minutes {day}, si ça vous convient.",
    "Intéressée. Pouvez-vous partager des cas clients ?",
    "Pourquoi pas. Envoyez-moi quelques créneaux.",
    "Quel serait le prix pour 5 utilisateurs ?",
    "Nous serions ouverts à un pilote.",
    "J'aimerais voir comment ça marche.",
    "Je suis en congés jusqu'à {day}, mais ça m'intéresse : on en parle à mon retour ?",
    "Relancez-moi en {month}, le budget sera ouvert.",
    "Très volontiers, proposez-moi deux dates.",
    "Où sont hébergées les données ? Le RGPD est important pour nous.",
    "Bonne idée, échangeons la semaine prochaine.",
    "C'est noté pour {day}, à bientôt !",
    "Nous serions intéressés par un rendez-vous.",
    "Vous avez une documentation technique ?",
]

NOT_INTERESTED = [
    "Merci, mais ça ne nous intéresse pas.",
    "Non merci.",
    "Ce n'est pas pour nous.",
    "Nous utilisons déjà {comp} et nous en sommes satisfaits.",
    "Nous sommes déjà équipés.",
    "Pas de budget pour ça, désolé.",
    "Pas pour le moment, merci.",
    "Nous venons de signer un contrat de trois ans avec {comp}.",
    "Je vais passer mon tour.",
    "Nous n'en avons pas besoin actuellement.",
    "Nous avons développé ça en interne, donc pas besoin.",
    "Merci, mais ce n'est pas une priorité cette année.",
    "Nous sommes trop petits pour ce type d'outil.",
    "Honnêtement, je n'en vois pas l'intérêt. Merci quand même.",
    "Pas intéressé.",
    "Nous avons choisi {comp} le mois dernier.",
    "Cela ne correspond pas à notre stratégie.",
    "Nous ne comptons pas changer de prestataire.",
    "Gel des dépenses chez nous, désolée.",
    "Ce n'est pas pour nous, bonne continuation.",
    "Je ne pense pas que ce soit pertinent pour notre activité.",
    "Notre contrat avec {comp} court encore deux ans.",
    "Nous n'externalisons pas ce genre de travail.",
    "Non. Nous sommes bien comme ça.",
    "Merci, nous restons avec notre solution actuelle.",
    "Pas à ce stade.",
    "C'est non pour nous.",
    "Nous avons décidé de partir sur autre chose.",
    "Le budget de l'année est déjà alloué.",
    "Merci, pas pertinent pour nous.",
    "Nous ne cherchons pas de nouvel outil.",
    "Nous ne donnerons pas suite.",
    "Aucun intérêt, merci.",
    "Peut-être une autre fois, pas maintenant.",
    "Nous n'avons pas la capacité pour ça.",
    "On est déjà servis, merci.",
    "Nous travaillons déjà avec un autre prestataire.",
]

UNSUBSCRIBE = [
    "Merci de me retirer de votre liste.",
    "Désabonnement.",
    "Arrêtez de m'écrire.",
    "Merci de ne plus me contacter.",
    "Ne plus envoyer d'e-mails à cette adresse.",
    "Stop, merci.",
    "Merci de ne pas me relancer.",
    "Je ne me suis jamais inscrit. Supprimez mon adresse.",
    "Conformément au RGPD, je vous demande d'effacer toutes mes données.",
    "Veuillez supprimer mes données personnelles et me le confirmer.",
    "Comment avez-vous eu mon adresse ? Supprimez-la et ne m'écrivez plus.",
    "Pas intéressé, et merci de me retirer de vos envois.",
    "Non merci. Désinscrivez-moi s'il vous plaît.",
    "Veuillez retirer mes coordonnées de votre base.",
    "C'est du spam. Arrêtez de m'envoyer des messages.",
    "Je ne souhaite plus recevoir vos e-mails.",
    "Ne m'écrivez plus jamais.",
    "Plus de relances s'il vous plaît, ça ne nous intéresse pas.",
    "Retirez-nous de votre liste de diffusion.",
    "Cessez tout contact.",
    "Merci de me désinscrire, ainsi que mon équipe.",
    "Troisième mail cette semaine. Ça suffit, stop.",
    "Plus d'e-mails svp.",
    "Supprimez-moi de votre CRM.",
    "Je ne veux plus de ces mails. Retirez-moi.",
    "Je l'ai déjà demandé : retirez-moi de la liste.",
    "Ne me contactez plus.",
    "Merci de ne plus me solliciter.",
    "Je m'oppose à l'utilisation de mes données à des fins de prospection.",
]

OTHER = [
    "Qui êtes-vous ?",
    "Comment avez-vous obtenu mon adresse e-mail ?",
    "Je ne suis pas la bonne personne.",
    "Erreur de destinataire, désolé.",
    "Ce n'est pas mon domaine, essayez {colleague}.",
    "Adressez-vous plutôt à {colleague}.",
    "C'est quelle société ?",
    "On se connaît ?",
    "Pour info.",
    "Voir ci-dessous.",
    "Bien reçu, merci.",
    "Merci.",
    "Je transmets au service concerné.",
    "Où nous sommes-nous rencontrés ?",
    "C'est un envoi groupé ?",
    "Merci de passer par notre portail fournisseurs.",
    "Les achats sont gérés par le siège.",
    "Je ne comprends pas de quoi il s'agit.",
    "Le lien de votre mail ne fonctionne pas.",
    "Merci d'écrire à contact@{company}.fr.",
    "{colleague} ne travaille plus ici, je le remplace.",
    "De quoi s'agit-il exactement ?",
    "Qui vous a donné mon nom ?",
    "Merci pour votre message.",
]

OUT_OF_OFFICE = [
    "Je suis absente du bureau jusqu'au {day} avec un accès limité à mes e-mails. En cas d'urgence, contactez {colleague}.",
    "Merci pour votre message. Je suis en congés et serai de retour le {day}.",
    "Je suis absent jusqu'au {day}. Je vous répondrai à mon retour.",
    "Je ne fais plus partie de {company}. Merci de contacter {colleague}.",
    "Cette boîte mail n'est plus consultée.",
    "Je suis en congé parental jusqu'en {month}.",
    "Je suis en déplacement et répondrai à mon retour.",
    "Je suis en arrêt maladie. Pour toute urgence, contactez {colleague}.",
    "Message d'absence : je suis en vacances jusqu'au {day} inclus.",
    "Cette adresse n'est plus active.",
    "J'ai quitté l'entreprise. Votre message ne sera pas lu.",
]

NEUTRAL = ["Merci pour votre message.", "Merci de votre retour.", "J'espère que vous allez bien.",
           "Merci pour votre mail."]
GREETINGS = ["Bonjour {name},", "Bonjour,", "Salut {name},", "Madame, Monsieur,", "Cher {name},", "Bonsoir,"]
SIGNOFFS = ["Cordialement,", "Bien cordialement,", "Bonne journée,", "Merci,", "Bien à vous,", "À bientôt,"]
NAMES = ["Claire Dubois", "Julien Martin", "Sophie Laurent", "Nicolas Petit", "Camille Moreau"]
COLLEAGUES = ["Marie", "Pierre", "Mme Lefèvre", "Thomas"]
ROLES = ["DSI", "directrice commerciale", "responsable marketing", "DAF"]
DAYS = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "demain", "mardi prochain"]
TIMES = ["10h", "14h", "15h30", "9h"]
MONTHS = ["janvier", "mars", "septembre", "début d'année prochaine"]
TITLES = ["Directeur général", "Responsable des ventes", "Chef de projet"]
QUOTE_HEADERS = ["Le {date}, {sender} a écrit :", "Le {date} à 10:14, {sender} a écrit :"]
OUTLOOK_HEADER = "De : {sender}\nEnvoyé : {date}\nÀ : {me}\nObjet : {subject}"
MOBILE = ["Envoyé de mon iPhone", "Envoyé depuis mon mobile"]
REPLY_PREFIX = "RE: "
AUTO_SUBJECT = ["Réponse automatique : {subject}", "Absent(e) du bureau : {subject}"]
SUBJECTS = ["Petite question sur {company}", "Une idée pour la prospection de {company}"]
PITCHES = [
    "Bonjour {first},\n\nJ'ai vu que {company} recrute des commerciaux. Nous aidons des équipes comme la vôtre "
    "à obtenir 30 % de rendez-vous en plus. Auriez-vous 15 minutes la semaine prochaine ?\n\nBien à vous,\nAlex",
    "Bonjour {first},\n\nNotre plateforme trouve des adresses vérifiées et gère toute la séquence. "
    "Une courte démo vous intéresserait ?\n\nCordialement,\nAlex",
]
