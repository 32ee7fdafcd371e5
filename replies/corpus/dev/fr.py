"""French reply phrasings (France, Belgium, Switzerland, Quebec), development set (second author; never used for training)."""

INTERESTED = [
    "Pourquoi pas, on s'appelle quand ?",
    "{day} à {time}, ça me va. Envoyez-moi une invitation.",
    "Vous pouvez m'envoyer une grille tarifaire ? On serait une trentaine d'utilisateurs.",
    "Franchement je suis sceptique, on a deja {comp}. Qu'est-ce que vous faites de plus ?",
    "Est-ce que les données sont hébergées en France ? C'est un prérequis chez nous.",
    "Je mets en copie {colleague}, notre {role}, c'est son périmètre. {colleague}, ça vaut le coup d'y jeter un œil je pense.",
    "Pas le bon moment avec la clôture, mais recontactez-moi en {month}, volontiers.",
    "A voir... tout dépend du prix et de la durée d'engagement.",
    "Bonjour, on est au Québec, avez-vous du support en français et des serveurs au Canada? Si oui, on pourrait jaser.",
    "Pas sûr que ce soit pour nous, mais ça coûte combien en gros ?",
    "Notre contrat avec {comp} se termine en {month}. Revenez vers moi un mois avant et on compare.",
    "ok chaud pour une démo, dispo jeudi aprem",
]

NOT_INTERESTED = [
    "Merci, mais ça ne nous intéresse pas.",
    "On a développé un outil en interne qui fait très bien le travail.",
    "Nous venons de signer pour trois ans avec {comp}.",
    "Pas de budget cette année, désolé.",
    "Ce n'est pas une priorité pour le moment.",
    "Non merci.",
    "Merci pour les infos, mais ce n'est pas adapté à une structure comme la nôtre.",
    "Quatrième relance... Toujours non, mais bravo pour la persévérance.",
    "Peut-être un jour, mais pas maintenant.",
    "Ah oui, encore un outil miracle. Très peu pour nous, merci.",
    "J'en ai parlé avec {colleague}, on ne va pas donner suite.",
    "Bof, on a deja teste ce genre de solution, ca n'a pas pris chez nous.",
]

UNSUBSCRIBE = [
    "Merci de me retirer de votre liste de diffusion.",
    "Pas intéressé. Supprimez mon adresse de vos fichiers svp.",
    "Merci de ne plus me relancer.",
    "Où avez-vous obtenu mes coordonnées ? Conformément au RGPD, je vous demande de supprimer toutes mes données.",
    "ARRÊTEZ DE M'ÉCRIRE.",
    "désinscription",
    "Je ne souhaite plus recevoir de messages de votre part.",
    "Encore un mail et je vous signale à la CNIL. Cessez tout contact.",
    "Merci de ne plus contacter personne chez {company}.",
    "Je ne suis plus chez {company} depuis un moment, merci de retirer cette adresse de vos listes.",
]

OTHER = [
    "Vous êtes qui ?",
    "Comment avez-vous eu mon adresse mail ?",
    "Je ne suis pas la bonne personne, voyez avec le service achats.",
    "Merci d'adresser votre demande à contact@{company}.fr.",
    "Pour info.",
    "Merci.",
    "Bien reçu.",
    "ok",
    "Le lien de votre mail ne fonctionne pas.",
    "C'est un robot qui m'écrit ?",
    "Vous faites erreur, nous sommes une boulangerie, pas un éditeur de logiciels.",
    "C'est à quel sujet ?",
    "J'ajoute {colleague} en copie pour information.",
    "Je ne m'occupe plus de ce dossier, c'est {colleague} maintenant.",
    "Votre mail s'affiche mal, je ne vois que des caractères bizarres à la place des accents.",
]

OUT_OF_OFFICE = [
    "Je suis absent(e) du bureau jusqu'au {day} inclus. Pour toute urgence, merci de contacter {colleague} : {colleague}@{company}.fr.",
    "Je suis actuellement en congé maternité jusqu'en {month}. Votre message ne sera pas transféré.",
    "{colleague} ne fait plus partie de {company}. Merci d'adresser vos messages à contact@{company}.fr.",
    "Cette boîte aux lettres n'est pas consultée. Merci de ne pas répondre à ce message.",
    "Je suis en déplacement sur un salon cette semaine, avec un accès limité à mes mails.",
    "Réponse automatique : je suis en arrêt maladie. Je traiterai votre message à mon retour.",
    "Nos bureaux sont fermés en raison du jour férié. Réouverture le {day}.",
    "Bonjour, je suis en vacances jusqu'au {day} sans accès à mes courriels. Pour les demandes urgentes, veuillez écrire à support@{company}.ca. Merci de votre compréhension.",
]
