"""Spanish reply phrasings, development set (second author; never used for training)."""

INTERESTED = [
    "me interesa, cuando podemos hablar?",
    "Dale, el {day} a las {time} me viene bien. Mándame la invitación.",
    "¿Cuánto sale para un equipo de 15 personas? Si el precio es razonable lo vemos.",
    "No me convence del todo. ¿En qué se diferencia de {comp}, concretamente?",
    "¿Funciona con Gmail o solo con Outlook? ¿Y los datos dónde se alojan?",
    "Pongo en copia a {colleague}, nuestra {role}, que es quien lleva esto. {colleague}, creo que vale la pena que lo veas.",
    "Ahora mismo estamos a tope, pero escríbeme en {month} y lo hablamos con calma.",
    "Puede ser... depende del precio y de si hay permanencia.",
    "Ché, justo estábamos buscando algo así. ¿Tenés un rato esta semana para una demo?",
    "Seguramente no es para nosotros, pero por curiosidad, ¿cuánto cuesta?",
    "Este trimestre es imposible, pero después de Semana Santa me encantaría verlo. Escríbeme entonces.",
    "sip, me late. agendamos algo pa la otra semana?",
]

NOT_INTERESTED = [
    "Gracias, pero no nos interesa.",
    "Lo tenemos resuelto con una herramienta interna.",
    "Acabamos de firmar con {comp} por tres años.",
    "Con la que está cayendo no hay presupuesto ni para el café. No.",
    "ahorita no es prioridad, gracias",
    "Mira, te lo agradezco, pero somos cuatro gatos y esto nos queda grande.",
    "No hace falta que me mandes precios, ya tenemos {comp} y nos va bien.",
    "Quinto correo... Admiro la insistencia, pero sigue siendo que no.",
    "Por ahora no. Si algún día lo necesitamos, ya te buscamos nosotros.",
    "Ah sí, justo lo que nos faltaba, otra herramienta milagrosa. No, gracias.",
    "Lo comenté con {colleague} y no vamos a avanzar.",
    "Paso, ya probamos algo parecido y no funcionó.",
]

UNSUBSCRIBE = [
    "Favor de ya no contactarme, gracias.",
    "No me interesa. Borren mi correo de su base de datos.",
    "Ya les dije tres veces que no. Dejen de escribirme, en serio.",
    "¿De dónde sacaron mis datos? En virtud del RGPD solicito la supresión de todos mis datos personales.",
    "DEJEN DE MANDARME CORREOS.",
    "Baja.",
    "Les pido que no me contacten más, ni a mí ni a nadie de {company}.",
    "Si me llega otro correo los reporto como spam. Basta ya.",
    "Nada personal, pero sácame de la secuencia. Si algún día necesitamos algo así, ya te escribo yo.",
    "Ya no trabajo en {company}, favor de eliminar esta dirección de sus listas.",
]

OTHER = [
    "¿Y usted de qué empresa es?",
    "¿Cómo consiguió mi correo?",
    "No soy la persona indicada, hable con el área de compras.",
    "Escriba a info@{company}.com, por favor.",
    "Le reenvío esto a quien corresponda.",
    "Gracias.",
    "Enterado.",
    "ok",
    "El enlace del correo no funciona.",
    "¿Es un mensaje automático o me escribe una persona de verdad?",
    "Creo que se equivocó de empresa, nosotros somos una clínica dental.",
    "Perdón, ¿nos conocemos? No entiendo de qué va el correo.",
    "Sumo a {colleague} en copia para que esté al tanto.",
    "Ya no estoy en ese puesto, ahora lo ve {colleague}.",
    "Creo que esto no era para mí, yo solo soy el becario.",
]

OUT_OF_OFFICE = [
    "¡Hola! Estoy de vacaciones hasta el {day} sin acceso al mail. Si es urgente, escribile a {colleague} a {colleague}@{company}.com.ar.",
    "Me encuentro de baja por maternidad hasta {month}. Su correo no será reenviado.",
    "{colleague} ya no forma parte de {company}. Por favor, escriba a contacto@{company}.com.",
    "Este buzón no es monitoreado. Por favor no responda a este correo.",
    "Estoy de viaje por trabajo hasta el {day}, con conexión limitada. Para temas de facturación escriba a facturacion@{company}.mx.",
    "Respuesta automática: me encuentro de baja médica. Atenderé su mensaje cuando me reincorpore.",
    "Nuestras oficinas permanecen cerradas por día festivo. Retomamos actividades el {day}.",
    "Gracias por escribirnos. Su solicitud fue registrada con el número de caso 77120 y será atendida en un plazo de 48 horas hábiles.",
]
