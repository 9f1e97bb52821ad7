"""What the e5 engine tests embed: chat messages in many scripts and of mixed lengths (empty and
one word included), odd white space and Unicode forms, and a passage longer than the model's 512
positions."""

from __future__ import annotations

TEXTS = [
    "Hi.",
    "Who rules the northern kingdom now that the old king is dead?",
    "Erzähl mir mehr über die Drachen im Gebirge und warum sie die Stadt meiden.",
    "北の王は誰でしたか？",
    "Кто был королём севера и что случилось с его сыном после войны?",
    "I draw my sword and step into the ruined chapel, looking for the relic the priest "
    "described, while the rain keeps hammering the broken windows above the altar.",
    "",
    "ok",
    "Who was the king of the north?",
    "Wer war der König des Nordens, und warum verlor er den Krieg gegen die Drachen?",
    "Кто был королём севера?",
    "من كان ملك الشمال؟",
    "उत्तर का राजा कौन था?",
    "  double  spaces\tand tabs\u00a0and a non-breaking space ",
    "Émile Zola — œuvre ﬁnale… ①②③ ｆｕｌｌｗｉｄｔｈ",
    "x",
]
LONG = " ".join(["The river kingdom kept its old roads and its older quarrels."] * 120)
