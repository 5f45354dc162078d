import { formatAmount } from "./format-amount.js";
import { bold, link, num, obj, str, text } from "./sender-markdown.js";

type Payload = Record<string, unknown>;

/** The amount in `object[field]` with the object's currency, in bold, or undefined. */
function amount(object: Record<string, unknown>, field: string): string | undefined {
  const minor = num(object[field]);
  const currency = str(object.currency);
  return minor === undefined || !currency ? undefined : bold(formatAmount(minor, currency));
}

/** A link into the Stripe dashboard (test-mode events into its test view). */
function dashboard(event: Payload, path: string, label: string): string {
  const test = event.livemode === true ? "" : "test/";
  return link(label, `https://dashboard.stripe.com/${test}${path}`);
}

/** `who` from whatever the object says about its customer, with a leading " for ". */
function forWhom(object: Record<string, unknown>): string {
  const email =
    str(object.receipt_email) ??
    str(object.customer_email) ??
    str(obj(object.customer_details).email) ??
    str(obj(object.billing_details).email);
  return email ? ` for ${text(email)}` : "";
}

const or = (value: string | undefined, fallback: string) => value ?? fallback;

const FORMATTERS: Record<string, (event: Payload, object: Record<string, unknown>) => string> = {
  "payment_intent.succeeded": (event, pi) =>
    `Payment of ${or(amount(pi, "amount_received") ?? amount(pi, "amount"), "an amount")} succeeded${forWhom(pi)}: ` +
    dashboard(event, `payments/${str(pi.id) ?? ""}`, str(pi.id) ?? "payment"),
  "payment_intent.payment_failed": (event, pi) => {
    const reason = str(obj(pi.last_payment_error).message);
    return (
      `Payment of ${or(amount(pi, "amount"), "an amount")} failed${forWhom(pi)}: ` +
      dashboard(event, `payments/${str(pi.id) ?? ""}`, str(pi.id) ?? "payment") +
      (reason ? `\n${text(reason, 500)}` : "")
    );
  },
  "charge.refunded": (event, charge) => {
    const target = str(charge.payment_intent) ?? str(charge.id) ?? "";
    return (
      `Refunded ${or(amount(charge, "amount_refunded"), "an amount")} of ${or(amount(charge, "amount"), "a charge")}${forWhom(charge)}: ` +
      dashboard(event, `payments/${target}`, str(charge.id) ?? "charge")
    );
  },
  "charge.dispute.created": (event, dispute) => {
    const reason = str(dispute.reason);
    return (
      `Dispute opened for ${or(amount(dispute, "amount"), "an amount")}${reason ? ` (${text(reason.replace(/_/g, " "))})` : ""}: ` +
      dashboard(event, `disputes/${str(dispute.id) ?? ""}`, str(dispute.id) ?? "dispute")
    );
  },
  "checkout.session.completed": (event, session) => {
    const pi = str(session.payment_intent);
    const id = str(session.id) ?? "checkout session";
    return (
      `Checkout completed: ${or(amount(session, "amount_total"), "an amount")}${forWhom(session)} (` +
      (pi ? dashboard(event, `payments/${pi}`, id) : text(id)) +
      ")"
    );
  },
  "invoice.paid": (event, invoice) =>
    `Invoice ${invoiceLink(event, invoice)} paid: ` +
    `${or(amount(invoice, "amount_paid"), "an amount")}${forWhom(invoice)}`,
  "invoice.payment_failed": (event, invoice) =>
    `Invoice ${invoiceLink(event, invoice)} payment failed: ` +
    `${or(amount(invoice, "amount_due"), "an amount")} due${forWhom(invoice)}`,
  "customer.subscription.created": (event, sub) =>
    `Subscription ${dashboard(event, `subscriptions/${str(sub.id) ?? ""}`, str(sub.id) ?? "subscription")} created` +
    `${subscriptionPrice(sub)}${customerOf(sub)}`,
  "customer.subscription.deleted": (event, sub) =>
    `Subscription ${dashboard(event, `subscriptions/${str(sub.id) ?? ""}`, str(sub.id) ?? "subscription")} canceled` +
    `${subscriptionPrice(sub)}${customerOf(sub)}`,
};

/** The invoice's number, linked to its hosted page (else to the dashboard). */
function invoiceLink(event: Payload, invoice: Record<string, unknown>): string {
  const label = str(invoice.number) ?? str(invoice.id) ?? "invoice";
  if (str(invoice.hosted_invoice_url)) return link(label, invoice.hosted_invoice_url);
  return dashboard(event, `invoices/${str(invoice.id) ?? ""}`, label);
}

/** ": 12.00 EUR per month" from the subscription's first item's price, when it has one. */
function subscriptionPrice(sub: Record<string, unknown>): string {
  const items = obj(sub.items).data;
  const price = obj(Array.isArray(items) ? obj(items[0]).price : undefined);
  const shown = amount(price, "unit_amount");
  if (!shown) return "";
  const interval = str(obj(price.recurring).interval);
  return `: ${shown}${interval ? ` per ${text(interval)}` : ""}`;
}

function customerOf(sub: Record<string, unknown>): string {
  const customer = str(sub.customer);
  return customer ? ` for customer ${text(customer)}` : "";
}

/**
 * A Stripe event as one markdown message: the listed types (DESIGN section 6) in words with their
 * amounts; any other type as one line `Stripe event <type> (<id>)`.
 */
export function stripeMessage(event: Payload): string {
  const type = str(event.type) ?? "unknown";
  const id = str(event.id) ?? "";
  const format = FORMATTERS[type];
  if (!format) return `Stripe event ${text(type)} (${text(id)})`;
  return format(event, obj(obj(event.data).object));
}
