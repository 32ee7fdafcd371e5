"""English reply phrasings, development set (second author; never used for training)."""

INTERESTED = [
    "yep, keen. when works?",
    "Go on then, you've got 15 minutes {day}. {time} suit?",
    "Ballpark figure for ~40 seats? If it's sane I'll take it to the team.",
    "Honestly sceptical - we've been burned by tools like this before. What do you actually do that {comp} doesn't?",
    "Does the Outlook add-in work on Mac or is it Windows-only?",
    "Not my area, but {colleague} (our {role}) has been moaning about exactly this problem for months. Cc'd - {colleague}, reckon you'll want to see this.",
    "Bad timing with year-end close. Drop me a line in {month} and we can have a proper look.",
    "Maybe. Depends entirely on price and whether IT signs off on it.",
    "We're locked in with {comp} until {month}, so reach out a few weeks before that and I'll happily compare.",
    "Probably not for us tbh, but out of curiosity what does it cost?",
    "No calls please, I live in meetings. Just email me a one-pager and the pricing and I'll read it.",
    "I'm on leave until {day} but this is timely - let's grab 20 mins when I'm back.",
]

NOT_INTERESTED = [
    "Thanks, but we're all set.",
    "We rolled our own internal tool for this two years ago and it does the job.",
    "Just signed a 3-year deal with {comp}, so it's a no from us.",
    "Zero budget for new tooling this year, sorry.",
    "Not a priority right now.",
    "Wow, a fifth follow-up. Impressive persistence, still a no.",
    "Pass.",
    "Sounds great in theory but we're a four-person shop, way overkill for us.",
    "I'll keep your details on file in case anything changes.",
    "No need to send pricing, we're covered on this front.",
    "Sure, because what we really need is yet another dashboard. No thanks.",
    "I passed it to {colleague} and she says it's not something we need.",
]

UNSUBSCRIBE = [
    "Take me off your list.",
    "Please don't follow up on this.",
    "Not interested and please remove my address from your database.",
    "STOP EMAILING ME. This is the fourth time.",
    "Under GDPR Article 17 I request erasure of all personal data you hold on me. Please confirm once done.",
    "Where did you get my email? Delete it and don't contact me again.",
    "unsubscribe",
    "Nothing personal, but please drop me from the sequence. If we ever need something like this I'll reach out.",
    "If I get one more of these I'm reporting you as spam. Stop.",
    "I left {company} months ago - please remove this address from your lists.",
]

OTHER = [
    "Who is this?",
    "How did you get my address?",
    "I'm not the person who handles vendor stuff - try procurement.",
    "Please send any proposals to info@{company}.com.",
    "Adding {colleague} for visibility.",
    "FYI",
    "Received, thanks.",
    "ok",
    "The link in your email goes to a 404 page.",
    "Are you a real person or is this automated?",
    "I think you've got the wrong {company} - we're a bakery in Leeds, not the software firm.",
    "Sorry, remind me - have we spoken before? What's this regarding?",
    "I moved to a different team last month; {colleague} looks after this now.",
    "Your email came through as a wall of HTML code, couldn't read any of it.",
    "Did you mean to send this to me? I'm just the office temp.",
]

OUT_OF_OFFICE = [
    "I'm out of the office until {day} with limited access to email. For anything urgent please contact {colleague} at {colleague}@{company}.com.",
    "Thank you for your message. I am currently on parental leave and will return in {month}. Your email will not be forwarded.",
    "This is an automated reply. {colleague} is no longer with {company}. Please direct enquiries to hello@{company}.com.",
    "This mailbox is not monitored. Please do not reply to this address.",
    "Travelling to our Singapore office this week - responses may be delayed due to time zones.",
    "Auto-reply: I'm on sick leave and not checking messages. I'll get back to you on my return.",
    "Our offices are closed for the bank holiday and will reopen on {day}. Thanks for your patience.",
    "Thanks for contacting us. Your request has been logged as ticket #48213 and a member of our team will respond within 2 business days.",
]
