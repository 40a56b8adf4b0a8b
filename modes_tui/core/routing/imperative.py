"""Whether a message opens with a verb and its object: a request complete in itself.

"restart the nginx service", "purge old docker images", "factor 391 into primes" ask for
something of their own however short they are; "only the tcp ones", "skipping the first two
rows", "recursive version please" continue the turn before them. With no part-of-speech
tagger, a first word is read as a verb by elimination (`_VERB_FIRST`: no function word, no
-ing or -ly form) when a determiner, a number, a file name or a particle follows it, and by a
list of verbs that are seldom anything else (`_TASK_VERB`) when a bare object follows.
A message that only names the thing it wants, with a clause about it ("tweet announcing our
launch", "regex for hex colours"), asks for it as surely (`named_thing`).
`core.routing.follow_up` reads these as requests, not elliptic fragments. The router's
classifier reads a request without its opener (`request_of`: "ok and how do i …").
"""

from __future__ import annotations

import re

# An imperative no list names: a first word that is no function word, then what a verb
# takes: a determiner or number opening its object, "me"/"us", a particle ("work out", "set
# up"), a file name or a formula ("restart the nginx service", "profile my flask endpoint",
# "teach me Italian", "unzip archive.zip", "factor 391"). A fragment opens with a
# preposition, an adverb, a determiner, a pronoun or an -ing form instead ("only the tcp
# ones", "with three dice", "skipping the first two rows"), which this does not match.
_NOT_A_VERB = (
    r"the|a|an|this|that|these|those|my|your|our|their|his|her|its|some|any|no|every|each|"
    r"all|both|either|neither|another|other|same|such|more|less|most|least|much|many|few|"
    r"only|just|even|also|still|maybe|perhaps|not|again|too|instead|rather|quite|very|now|"
    r"then|so|and|but|or|nor|yet|because|though|although|while|unless|whether|in|on|at|"
    r"for|with|without|from|to|by|about|under|over|after|before|into|onto|like|near|since|"
    r"than|via|per|during|within|across|through|between|among|against|along|around|behind|"
    r"beyond|up|down|off|out|as|of|something|anything|everything|nothing|someone|anyone|"
    r"one|ones|it|they|we|you|he|she|there|here|next|last|first|second|third|else|yes|ok|"
    r"okay|half|twice|is|are|was|were|am|be|been|do|does|did|can|could|will|would|"
    r"should|shall|may|might|must|has|have|had|what|why|how|when|where|which|who|whom|"
    r"whose|if|i|i'm|i've|i'd|me|us"
)
# a verb, or a gerund or adverb form that is one ("ping", "bring", "apply", "tally")
_VERB_FIRST = (
    rf"^(?!(?:{_NOT_A_VERB})\b)(?:ping|bring|string|tally|rally|[a-z][a-z-]*(?<!ing)"
    r"(?<![^p]ly)) "
)
_IMPERATIVE = re.compile(
    _VERB_FIRST + r"(?:(?:the|a|an|this|these|my|our|your|their|every|each|all|some|two|"
    r"three|four|five|me|us|out|up|whether)\b"
    # a number, a file name or a formula, in a request of three words or more ("factor 391
    # into primes"; "node 18" and "python 3.12" answer a question)
    r"|(?=\S+ \S)(?:\d|\S*[./_*^(=]))"
)
# A verb that is seldom anything else, then a bare object ("purge old docker images",
# "brainstorm taglines for a coffee shop"): a request, though no determiner opens its object.
# (A first word only `_VERB_FIRST` reads as a verb may be a noun: "recursive version please".)
# Not verbs that are nouns in a compound ("restart policy", "resume template", "compose
# file", "download link") or that often ask about the last answer ("explain", "remove",
# "solve": "explain line 3", "remove comments"); not before "please", a part of the last
# answer or an adverb that ends the message ("simplify step two", "shuffle randomly").
_TASK_VERB = re.compile(
    r"^(?:purge|flush|wipe|unmount|encrypt|decrypt|enable|disable|rename|compress|unzip|"
    r"deploy|revert|uninstall|reinstall|downgrade|prune|migrate|configure|optimi[sz]e|"
    r"memoi[sz]e|paginate|validate|saniti[sz]e|(?:de)?seriali[sz]e|throttle|debounce|"
    r"brainstorm|respond|paraphrase|reword|condense|integrate|differentiate|simplify|"
    r"evaluate|derive|multiply|divide|teach|narrate|critique|rotate|unstage|soften|rephrase|"
    r"weigh|reorgani[sz]e|restructure|rearrange|reformat|capitali[sz]e|transpose|invert|"
    r"shuffle|dedupe|deduplicate|normali[sz]e|tokeni[sz]e|visuali[sz]e|diagnose|troubleshoot|"
    r"investigate|inspect|detect|automate|containeri[sz]e|dockeri[sz]e|publish|apologi[sz]e|"
    r"congratulate|invite|introduce|announce|persuade|justify|verify|quantify|"
    r"priorit[iy][sz]e|allocate|minimi[sz]e|maximi[sz]e|choose|decide|"
    # the request list's verbs that seldom ask about the last answer (not "make", "give")
    r"recommend|suggest|proofread|implement) "
    rf"(?!(?:{_NOT_A_VERB}|them|him|everyone|please|pls|back|further|step|steps|line|lines|"
    r"part|parts|output)\b)"
    r"(?![a-z]+(?:ly|wise)\b\W*(?:(?:please|pls)\W*)?$)[a-z0-9]"  # "explain briefly"
)
# The same verb with a pronoun for its object ("simulate it in python") leans on the last
# turn for its object: it reads as elliptic, but that pull is the pronoun's (`carried`).
_IMPERATIVE_ON_IT = re.compile(_VERB_FIRST + r"(?:it|that|them|those)\b")


def orders(text: str) -> bool:
    """`text` (lowercased, its discourse opener removed) opens with a verb and an object of
    its own ("restart the nginx service", "purge old docker images")."""
    return _IMPERATIVE.match(text) is not None or _TASK_VERB.match(text) is not None


def on_its_object(text: str) -> bool:
    """`text` opens with a verb whose object is a pronoun ("simulate it in python")."""
    return _IMPERATIVE_ON_IT.match(text) is not None


OPENER = r"(?:(?:ok(?:ay)?|alright|right|so|then|now|next|after that|and|also)\b[\s,:;.!-]*)*"
"""Openers that order or join the turns ("ok and", "next", "then")."""
CODE_MADE = (
    r"function|method|class|script|query|regex|regular expression|test|snippet|component|"
    r"endpoint|parser|decorator|struct|migration|command|alias|cron job|crontab entry"
)
"""Things code and commands are made as (not a game, an app or a program: see `_NAMED`)."""
TEXT_MADE = (
    r"email|e-mail|letter|note|message|post|article|essay|story|poem|haiku|limerick|sonnet|"
    r"song|lyrics|speech|toast|eulogy|review|announcement|newsletter|paragraph|bio|headline|"
    r"tagline|slogan|caption|description|blurb|reply|invitation|card|memo|press release|"
    r"pitch|proposal|abstract|intro|introduction|summary|recap|report|listing|ad|advert|"
    r"flyer|notice|apology|complaint|tweet|cover letter|resume|cv"
)
"""Texts: things prose is made as."""
_TOPIC_NAMES = (
    "class test note article story song lyrics review description card abstract intro "
    "introduction ad advert"
)
_NAMED_TOPICS = frozenset(_TOPIC_NAMES.split())
"""Things a message names as often to ask about one as to ask for one ("test for lactose
intolerance", "lyrics to bohemian rhapsody", "card for her, or flowers?")."""
_NAMED_ALONE = "|".join(
    thing for thing in f"{CODE_MADE}|{TEXT_MADE}".split("|") if thing not in _NAMED_TOPICS
)
_NAMED = re.compile(
    rf"^{OPENER}(?!(?:the|my|our|your|his|her|their|this|that|these|those|its)\b)"
    rf"(?P<object>(?:(?:a|an|some|one|two|three|\d+)\s+)?(?:(?!(?:a|an|the)\s)[\w'+#./-]+\s+){{0,2}}?"
    rf"(?:{_NAMED_ALONE})s?)(?=\s+(?:to|for|about|announcing|telling|asking|"
    r"explaining|thanking|inviting|apologi[sz]ing|that|which|on|in|with)\s+\S)"
)
"""A request that only names the thing it wants ("tweet announcing our launch", "email to
parents about the retake test"): the thing, read as if asked for with "write". Only the things
a bare name asks for: not a game or an app (`CODE_MADE` leaves them out) nor `_NAMED_TOPICS`,
which a message names as often to ask about one ("board game for 6 players", "lyrics to
bohemian rhapsody", "test for lactose intolerance"), and not a thing of the user's ("the unit
test for my parser fails"); nor a message with a verb or a question of its own (`_TELLS`)."""
_TELLS = re.compile(
    r"\b(?:is|are|was|were|am|be|been|says|said|came|comes|got|gets|went|goes|has|have|had|"
    r"does|did|do|don't|doesn't|didn't|isn't|aren't|wasn't|won't|can't|can|could|would|"
    r"should|will|keeps|kept|returns|returned|fails|failed|crashes|crashed|bounced|shows|"
    r"showed|looks|seems|works|worked|stopped|broke|lost|arrived|mean|means|what|why|how|"
    r"who|where|when|which)\b"
)
"""Words that make a message a statement or a question of its own ("message in the log says
detached head", "letter to the irs came back undelivered, what now")."""


def named_thing(text: str) -> str | None:
    """The thing a message that only names it asks for, with an article ("a tweet" of "tweet
    announcing our launch"); None when the message does more than name a thing."""
    text = " ".join(text.lower().split())
    found = _NAMED.match(text)
    if found is None or orders(text) or "?" in text or _TELLS.search(text):
        return None  # "explain a function that …" asks with its verb; "… says …" tells
    thing = found.group("object")
    if re.match(r"(?:a|an|some|one|two|three|\d+)\s", thing):
        return thing
    return f"{'an' if thing[0] in 'aeiou' else 'a'} {thing}"


_DISCOURSE_WORDS = r"ok(?:ay)?|alright|right|so|and|but|also|plus|then|now|next|after that"
DISCOURSE = re.compile(rf"^(?:(?:{_DISCOURSE_WORDS})\b[\s,:;.!-]*)+")
"""An opener that joins or orders the turns ("ok and", "but", "next")."""
_OPENER_ANY_CASE = re.compile(
    rf"^(?:(?:{_DISCOURSE_WORDS})(?![.(/-]\S)\b[\s,:;.!-]*)+", re.IGNORECASE
)
"""`DISCOURSE`, but not a name or a call it starts ("Next.js", "then()", "so-called")."""
REQUEST_MIN_WORDS = 4
"""The words a message must keep after its opener for `request_of` to drop the opener."""


def request_of(text: str) -> str:
    """`text` without an opener ("ok and how do i restart postgres …" reads as "how do i
    restart postgres …"): the classifier reads the request, and "ok and" near no example only
    lowers its in-scope chance (shell 0.69 -> 0.58). A fragment ("and in Go?") keeps it."""
    found = _OPENER_ANY_CASE.match(text.lstrip())
    rest = text.lstrip()[found.end() :] if found else text
    words = re.findall(r"[a-z0-9']+", rest.lower())
    return rest if found and len(words) >= REQUEST_MIN_WORDS else text
