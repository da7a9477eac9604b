"""`format`s, written here from their RFC definitions (the languages equal llguidance's): name ->
regex (Rust syntax), matched against a whole string's decoded text."""

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_DATE = (r"[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
         r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|[12][0-9]))")
_TIME = (r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?"
         r"(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])")
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
# RFC 5321 Mailbox: a dot-string local part, then a domain or an IPv4 address literal.
_ATOM = r"[a-zA-Z0-9!#$%&'*+\-/=?^_`{|}~]+"
_SUBDOMAIN = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_EMAIL = rf"{_ATOM}(?:\.{_ATOM})*@(?:{_SUBDOMAIN}(?:\.{_SUBDOMAIN})*|\[(?:{_OCTET}\.){{3}}{_OCTET}\])"
# RFC 3339 appendix A durations: P, then a date part (years/months/days, optional time part),
# a time part alone, or weeks.
_DUR_TIME = r"T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DURATION = (r"P(?:(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)(?:" + _DUR_TIME + r")?"
             r"|" + _DUR_TIME + r"|[0-9]+W)")
# RFC 3986 URIs (IPv6 literals in their compressed forms without an embedded IPv4 address).
_PCT = "%[0-9a-fA-F]{2}"
_SUB_DELIMS = "!$&'()*+,;="
_UNRESERVED = "a-zA-Z0-9\\-._~"
_PCHAR = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_H16 = "[0-9a-fA-F]{1,4}"
_IPV6 = "|".join([f"(?:{_H16}:){{7}}{_H16}", f"(?:{_H16}:){{1,7}}:"]
                 + [f"(?:{_H16}:){{1,{7 - k}}}(?::{_H16}){{1,{k}}}" for k in range(1, 7)]
                 + [f":(?::{_H16}){{1,7}}", "::"])
_HOST = (rf"\[(?:{_IPV6}|v[0-9a-fA-F]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\]"
         rf"|(?:{_OCTET}\.){{3}}{_OCTET}|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*")
_URI = (rf"[a-zA-Z][a-zA-Z0-9+\-.]*:"
        rf"(?://(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?(?:{_HOST})(?::[0-9]*)?(?:/{_PCHAR}*)*"
        rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|{_PCHAR}+(?:/{_PCHAR}*)*|)"
        rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?")
FORMATS = {
    "date": _DATE,
    "time": _TIME,
    "date-time": _DATE + "[tT]" + _TIME,
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": rf"(?:{_OCTET}\.){{3}}{_OCTET}",
    "hostname": rf"{_LABEL}(?:\.{_LABEL})*",
    "email": _EMAIL,
    "duration": _DURATION,
    "uri": _URI,
    "ipv6": _IPV6,
    "unknown": r"(?s:.*)",
}
