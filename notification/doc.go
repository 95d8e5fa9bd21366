// Package notification defines herald's message contract v1: the JSON body a
// producer puts on the herald SQS queue, and its validation.
//
// One SQS message body is one [Message]. Producers in Go build a Message and
// send the bytes of [json.Marshal]; producers in other languages validate
// against the JSON Schema (draft 2020-12) shipped beside this package as
// notification.v1.schema.json. The schema accepts every document [Parse]
// accepts; Parse also checks what JSON Schema cannot express (RFC 5322
// mailbox syntax, 50 recipients across to, cc and bcc, a URL's host and
// port, a member name given twice in one object, header names that differ
// only in case). Tests and a fuzz target check the two agree on the samples in
// testdata and on generated bodies.
//
// The contract is documented in docs/contract.md.
package notification
