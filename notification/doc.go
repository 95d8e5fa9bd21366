// Package notification defines herald's message contract v1: the JSON body a
// producer puts on the herald SQS queue, and its validation.
//
// One SQS message body is one [Message]. Producers in Go build a Message and
// send the bytes of [json.Marshal]; producers in other languages validate
// against the JSON Schema (draft 2020-12) shipped beside this package as
// notification.v1.schema.json. The Go validator ([Parse]) and the schema
// accept and reject the same documents; a test checks both on every sample in
// testdata.
//
// The contract is documented in docs/contract.md.
package notification
