import { Webhook } from "standardwebhooks";

// Verifies a request of herald with the endpoint's secret (whsec_...) and
// returns its body: {type, timestamp, data}. headers: the request's headers
// with lower-case names (as Node's req.headers has them); body: the raw
// body, as received. Throws when the request is not herald's.
export function receive(secret, headers, body) {
  const event = new Webhook(secret).verify(body, headers);
  // event.type === headers["herald-event-type"]; headers["webhook-id"] is the
  // same on every attempt of a delivery: deduplicate on it.
  return event;
}
