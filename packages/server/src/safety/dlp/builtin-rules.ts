import type { DlpRule } from "./dlp-rule.js";
import { passesLuhn } from "./luhn.js";
import { createPatternRule } from "./pattern-rule.js";

// Runs of digits where single spaces or dashes may separate groups ("4111 1111-1111 1111"), of
// at least as many digits as the shortest card number has (13): shorter runs, most of them (a
// short commit sha's digits, a version, a date), cannot hold a card whatever their layout. The
// lookarounds keep a run from starting or ending in the middle of a longer number.
const DIGIT_RUN = /(?<!\d)\d(?:[ -]?\d){12,}(?!\d)/g;

// How card numbers are printed: 4-4-4-4 (most), 4-4-4-4-3 (19 digits), 4-6-5 (Amex), 4-6-4
// (Diners). A run that starts with one of these layouts may carry more digits after it, such as
// a security code typed after the number.
const CARD_LAYOUTS: readonly (readonly number[])[] = [
  [4, 4, 4, 4, 3],
  [4, 4, 4, 4],
  [4, 6, 5],
  [4, 6, 4],
];

function isCardNumber(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false;
  // No issuer number starts with 0, and a run of one repeated digit (0000..., 5555...) is
  // filler, not a card, even when it happens to pass Luhn.
  if (digits.startsWith("0") || /^(\d)\1*$/.test(digits)) return false;
  return passesLuhn(digits);
}

function startsWithCardLayout(groups: readonly string[]): boolean {
  return CARD_LAYOUTS.some(
    (layout) =>
      layout.length < groups.length &&
      layout.every((length, i) => groups[i]!.length === length) &&
      isCardNumber(groups.slice(0, layout.length).join("")),
  );
}

function containsPaymentCard(text: string): boolean {
  for (const [run] of text.matchAll(DIGIT_RUN)) {
    if (isCardNumber(run.replace(/[ -]/g, ""))) return true;
    if (startsWithCardLayout(run.split(/[ -]/))) return true;
  }
  return false;
}

const PAYMENT_CARD: DlpRule = {
  id: "payment_card",
  description: "Payment card number (13-19 digits passing the Luhn check)",
  matches: containsPaymentCard,
};

// The header alone is often quoted in documentation; a leak is the header followed by key
// material, so at least 40 base64 characters must follow it (optionally after RFC 1421 headers
// such as Proc-Type/DEK-Info of legacy encrypted keys). The END line may be cut off by a paste.
const PRIVATE_KEY = createPatternRule(
  "private_key",
  "Private key (PEM or OpenSSH private key block)",
  /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----\s*(?:[A-Za-z-]+:[^\n]*\n\s*)*(?:[A-Za-z0-9+/=]\s*){40}/,
);

const CLOUD_ACCESS_KEY = createPatternRule(
  "cloud_access_key",
  "Cloud or SaaS access key (AWS, Google API, GitHub, Slack)",
  new RegExp(
    [
      // AWS access key id: long-term (AKIA) or temporary (ASIA).
      String.raw`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`,
      // Google API key.
      String.raw`\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])`,
      // GitHub personal, OAuth, app installation, user-to-server and refresh tokens.
      String.raw`\bgh[pousr]_[A-Za-z0-9]{36,251}\b`,
      // GitHub fine-grained personal access token.
      String.raw`\bgithub_pat_[A-Za-z0-9_]{22,}`,
      // Slack bot, user, app, refresh and legacy tokens: a numeric team or user id comes first.
      String.raw`\bxox[abprs]-\d{4,}-[A-Za-z0-9][A-Za-z0-9-]{7,}`,
    ].join("|"),
  ),
);

/** The rules every policy starts from, in the order they are checked. */
export const BUILTIN_DLP_RULES: readonly DlpRule[] = Object.freeze([
  PAYMENT_CARD,
  PRIVATE_KEY,
  CLOUD_ACCESS_KEY,
]);
