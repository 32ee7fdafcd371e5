"""Spanish base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Me interesa, hablemos.",
    "Claro, ¿qué tal el {day} a las {time}?",
    "El {day} a las {time} me viene bien.",
    "Envíame una invitación para el {day}.",
    "¿Me podéis enviar los precios?",
    "¿Cuánto costaría para un equipo de 20 personas?",
    "Interesante. ¿Tienes una presentación que puedas compartir?",
    "Me gustaría ver una demo la semana que viene.",
    "Justo buscamos algo así. ¿Cuándo tienes disponibilidad?",
    "Agendemos 30 minutos, aquí tienes mi calendario: https://cal.example.com/reunion",
    "Estoy abierto a una conversación. ¿El jueves por la tarde?",
    "¿Cómo se integra con Salesforce?",
    "¿Soporta inicio de sesión único?",
    "¿Cuánto tarda la implantación?",
    "¿Hay una prueba gratuita?",
    "Queremos probarlo. ¿Cómo empezamos?",
    "De esto se encarga mi compañera {colleague}, la pongo en copia. {colleague}, creo que merece la pena hablar.",
    "Se lo paso a {colleague}, nuestro {role}, que te escribirá para agendar una llamada.",
    "Ahora no es buen momento, pero escríbeme en {month} y lo vemos con gusto.",
    "Vuelve a contactarme después de {month} y lo miramos con calma.",
    "El momento es perfecto, estamos revisando proveedores.",
    "Sí, por favor, mándame más información.",
    "Coordina una reunión con mi asistente.",
    "Tengo curiosidad. ¿Qué resultados han tenido empresas parecidas?",
    "vale, adelante",
    "sí",
    "Llámame mañana por la mañana al 612 345 678.",
    "¿Podemos moverlo al {day}? Si no, cuenta conmigo.",
    "Mándame una propuesta y la reviso con el equipo.",
    "¿Cuál es la permanencia mínima?",
    "¿En qué se diferencian de {comp}? Estamos pensando en cambiar.",
    "No estamos contentos con {comp}, así que sí, cuéntame más.",
    "Tengo 15 minutos el {day}, si te cuadra.",
    "Interesada. ¿Puedes compartir casos de éxito?",
    "¿Por qué no? Pásame un par de horarios.",
    "¿Cuál sería el precio para 5 usuarios?",
    "Estaríamos abiertos a un piloto.",
    "Me encantaría ver cómo funciona.",
    "Estoy de vacaciones hasta el {day}, pero me interesa: ¿hablamos a la vuelta?",
    "Escríbeme de nuevo en {month}, tendremos presupuesto.",
    "Con mucho gusto, proponme dos fechas.",
    "¿Dónde se alojan los datos?",
    "Perfecto, nos vemos el {day}.",
    "Nos interesaría una reunión.",
    "Podríamos hablar esta semana, ¿te va bien?",
]

NOT_INTERESTED = [
    "Gracias, pero no nos interesa.",
    "No, gracias.",
    "No encaja con nosotros.",
    "Ya usamos {comp} y estamos contentos.",
    "Ya estamos cubiertos en este tema.",
    "No tenemos presupuesto para esto, lo siento.",
    "Ahora no, gracias.",
    "Acabamos de firmar un contrato de tres años con {comp}.",
    "Paso.",
    "No lo necesitamos en este momento.",
    "Lo hemos desarrollado internamente, así que no hace falta.",
    "Gracias, pero no es una prioridad este año.",
    "Somos demasiado pequeños para una herramienta así.",
    "Sinceramente, no le vemos valor. Gracias de todos modos.",
    "No estoy interesado.",
    "El mes pasado elegimos {comp}.",
    "No encaja en nuestra estrategia.",
    "No tenemos previsto cambiar de proveedor.",
    "Tenemos congelado el gasto, lo siento.",
    "No es para nosotros, suerte.",
    "No creo que sea relevante para lo que hacemos.",
    "Nuestro contrato con {comp} dura dos años más.",
    "No externalizamos este tipo de trabajo.",
    "No. Estamos bien así.",
    "Gracias, seguiremos con nuestra solución actual.",
    "De momento no.",
    "Por nuestra parte es un no.",
    "Hemos decidido ir por otro camino.",
    "El presupuesto del año ya está asignado.",
    "No buscamos herramientas nuevas.",
    "No vamos a seguir adelante.",
    "Ningún interés, gracias.",
    "Quizás en otro momento, ahora no.",
    "No tenemos capacidad para esto.",
    "Ya trabajamos con otro proveedor.",
    "No nos hace falta, gracias.",
]

UNSUBSCRIBE = [
    "Por favor, elimíname de vuestra lista.",
    "Darme de baja.",
    "Deja de escribirme.",
    "Por favor, no me contactéis más.",
    "No envíen más correos a esta dirección.",
    "Basta, por favor.",
    "Por favor, no hagas seguimiento.",
    "Nunca me suscribí. Borra mi dirección.",
    "Conforme al RGPD, solicito la supresión de todos mis datos.",
    "Eliminad mis datos personales y confirmádmelo.",
    "¿De dónde sacaste mi correo? Bórralo y no vuelvas a escribir.",
    "No me interesa, y por favor sácame de futuros envíos.",
    "No, gracias. Dadme de baja, por favor.",
    "Retiren mis datos de contacto de su base de datos.",
    "Esto es spam. Dejad de enviarme mensajes.",
    "No quiero recibir más correos vuestros.",
    "No me vuelvas a escribir.",
    "Nada de más seguimientos, no nos interesa.",
    "Quitadnos de vuestra lista de distribución.",
    "Cesen todo contacto.",
    "Dad de baja a todo mi equipo, por favor.",
    "Tercer correo esta semana. Basta ya.",
    "No más correos, por favor.",
    "Sacadme de vuestro CRM.",
    "Ya lo pedí antes: quitadme de la lista.",
    "No me contacten más.",
    "Baja.",
    "Me opongo al tratamiento de mis datos con fines comerciales.",
]

OTHER = [
    "¿Quién eres?",
    "¿Cómo conseguiste mi correo?",
    "No soy la persona adecuada.",
    "Se han equivocado de persona.",
    "No llevo este tema, prueba con {colleague}.",
    "Mejor escribe a {colleague}.",
    "¿Qué empresa es esta?",
    "¿Nos conocemos?",
    "Para tu información.",
    "Ver abajo.",
    "Recibido, gracias.",
    "Gracias.",
    "Lo reenvío al departamento correspondiente.",
    "¿Dónde nos conocimos?",
    "¿Es un envío masivo?",
    "Por favor, utilice nuestro portal de proveedores.",
    "Las compras las gestiona la central.",
    "No entiendo de qué se trata.",
    "El enlace de tu correo no funciona.",
    "Escribe a info@{company}.es para consultas generales.",
    "{colleague} ya no trabaja aquí, soy su sustituto.",
    "¿De qué se trata exactamente?",
    "¿Quién te dio mi nombre?",
]

OUT_OF_OFFICE = [
    "Estoy fuera de la oficina hasta el {day} con acceso limitado al correo. Para urgencias, contacte con {colleague}.",
    "Gracias por su mensaje. Estoy de vacaciones y volveré el {day}.",
    "Estaré ausente hasta el {day}. Responderé a mi regreso.",
    "Ya no trabajo en {company}. Por favor, contacte con {colleague}.",
    "Este buzón ya no se revisa.",
    "Estoy de baja por maternidad hasta {month}.",
    "Estoy de viaje y responderé a mi vuelta.",
    "Estoy de baja médica. Para cualquier urgencia, escriba a {colleague}.",
    "Respuesta automática: estoy de vacaciones hasta el {day}.",
    "Esta dirección ya no está activa.",
    "He dejado la empresa. Su mensaje no será leído.",
]

NEUTRAL = ["Gracias por tu mensaje.", "Gracias por escribir.", "Espero que estés bien.", "Gracias por el correo."]
GREETINGS = ["Hola {name},", "Hola,", "Buenos días,", "Estimado {name}:", "Buenas tardes,", "Hola {name}"]
SIGNOFFS = ["Saludos,", "Un saludo,", "Atentamente,", "Gracias,", "Un abrazo,", "Saludos cordiales,"]
NAMES = ["Lucía García", "Javier López", "Carmen Ruiz", "Pablo Fernández", "Marta Sánchez"]
COLLEAGUES = ["Laura", "Diego", "Ana", "Sergio"]
ROLES = ["director de tecnología", "directora comercial", "responsable de marketing"]
DAYS = ["lunes", "martes", "miércoles", "jueves", "viernes", "mañana"]
TIMES = ["10:00", "16:00", "11:30", "9:00"]
MONTHS = ["enero", "marzo", "septiembre", "el próximo trimestre"]
TITLES = ["Director General", "Responsable de Ventas", "Jefa de Operaciones"]
QUOTE_HEADERS = ["El {date}, {sender} escribió:", "El {date} a las 10:14, {sender} escribió:"]
OUTLOOK_HEADER = "De: {sender}\nEnviado: {date}\nPara: {me}\nAsunto: {subject}"
MOBILE = ["Enviado desde mi iPhone", "Enviado desde mi móvil"]
REPLY_PREFIX = "RE: "
AUTO_SUBJECT = ["Respuesta automática: {subject}", "Fuera de la oficina: {subject}"]
SUBJECTS = ["Pregunta rápida sobre {company}", "Una idea para las ventas de {company}"]
PITCHES = [
    "Hola {first}:\n\nHe visto que {company} está contratando comerciales. Ayudamos a equipos como el tuyo a "
    "conseguir un 30 % más de reuniones. ¿Tendrías 15 minutos la semana que viene?\n\nSaludos,\nAlex",
    "Hola {first},\n\nNuestra plataforma encuentra correos verificados y gestiona toda la secuencia. "
    "¿Te interesaría una demo corta?\n\nUn saludo,\nAlex",
]
