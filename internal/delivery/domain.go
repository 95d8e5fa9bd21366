package delivery

import "strings"

// HasEmptyLabel reports whether name, a domain name in dotted ASCII form,
// has an empty label: it is empty, starts or ends with a dot, or holds two
// dots in a row. Every label has at least one character (RFC 1035 §2.3.1,
// RFC 5321 §4.1.2). A caller that accepts an absolute name (one trailing
// dot, RFC 1034 §3.1) removes that dot first.
//
// Check a name after its IDNA mapping (UTS #46, golang.org/x/net/idna),
// not before: the mapping deletes default-ignorable characters (U+00AD,
// U+034F, U+200B, ...) and maps full stops such as U+3002 to ".", so
// "a.\u034f" and "a\u3002" both become "a.", and "\u200b" becomes "".
func HasEmptyLabel(name string) bool {
	return name == "" || name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..")
}
