import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { BUILTIN_DLP_RULES } from "../../../src/safety/dlp/builtin-rules.js";

function rule(id: string) {
  const found = BUILTIN_DLP_RULES.find((r) => r.id === id);
  if (!found) throw new Error(`no built-in rule ${id}`);
  return found;
}

describe("BUILTIN_DLP_RULES", () => {
  it("lists payment_card, private_key and cloud_access_key in that order", () => {
    expect(BUILTIN_DLP_RULES.map((r) => r.id)).toEqual([
      "payment_card",
      "private_key",
      "cloud_access_key",
    ]);
    for (const r of BUILTIN_DLP_RULES) expect(r.description).not.toBe("");
  });
});

describe("payment_card", () => {
  const paymentCard = rule("payment_card");

  it.each([
    ["Visa, contiguous", "4111111111111111"],
    ["Visa, spaces", "card 4111 1111 1111 1111 thanks"],
    ["Mastercard, dashes", "5555-5555-5555-4444"],
    ["Amex 4-6-5", "amex: 3782 822463 10005."],
    ["Diners 14 digits", "30569309025904"],
    ["Visa 13 digits", "4222222222222"],
    ["19 digits", "6250941006528599016"],
    ["followed by a security code", "4111 1111 1111 1111 123"],
    ["inside a sentence with punctuation", "pay with (4111-1111-1111-1111), ok?"],
    ["after other digits on another line", "order 12345\n4111111111111111"],
  ])("matches a Luhn-valid number: %s", (_name, text) => {
    expect(paymentCard.matches(text)).toBe(true);
  });

  it.each([
    ["Luhn-invalid 16 digits", "4111111111111112"],
    ["Luhn-invalid with spaces", "4111 1111 1111 1112"],
    ["Luhn-invalid with dashes", "5555-5555-5555-4445"],
    ["12 digits, Luhn-valid", "411111111113"],
    ["20 digits", "41111111111111111113"],
    ["part of a longer digit string", "x941111111111111111199"],
    ["repeated digit filler", "0000 0000 0000 0000"],
    ["starts with 0", "0411111111111111"],
    ["groups separated by two spaces", "4111  1111  1111  1111"],
    ["phone number", "call +1 555 123 4567"],
    ["IBAN", "DE89 3704 0044 0532 0130 00"],
    ["timestamp", "2026-11-22 10:00:00"],
  ])("does not match: %s", (_name, text) => {
    expect(paymentCard.matches(text)).toBe(false);
  });
});

describe("private_key", () => {
  const privateKey = rule("private_key");
  const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
  const ec = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n";

  it.each([
    ["RSA (PKCS#1)", rsa.privateKey.export({ type: "pkcs1", format: "pem" }).toString()],
    ["plain (PKCS#8)", rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString()],
    ["EC (SEC1)", ec.privateKey.export({ type: "sec1", format: "pem" }).toString()],
    [
      "ENCRYPTED (PKCS#8)",
      rsa.privateKey
        .export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "pw" })
        .toString(),
    ],
    [
      "legacy encrypted RSA with headers",
      rsa.privateKey
        .export({ type: "pkcs1", format: "pem", cipher: "aes-128-cbc", passphrase: "pw" })
        .toString(),
    ],
    ["OPENSSH", `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}-----END OPENSSH PRIVATE KEY-----`],
    ["DSA", `-----BEGIN DSA PRIVATE KEY-----\n${body}-----END DSA PRIVATE KEY-----`],
    ["PGP", `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${body}`],
    ["cut off before the END line", `-----BEGIN RSA PRIVATE KEY-----\n${body}`],
  ])("matches a %s block", (_name, pem) => {
    expect(privateKey.matches(pem)).toBe(true);
  });

  it("matches a key block pasted inside a longer message", () => {
    const pem = ec.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    expect(privateKey.matches(`here is the deploy key:\n\`\`\`\n${pem}\`\`\`\nthanks!`)).toBe(true);
  });

  it.each([
    ["a mention of the header alone", "the file starts with -----BEGIN RSA PRIVATE KEY-----"],
    ["a public key", rsa.publicKey.export({ type: "spki", format: "pem" }).toString()],
    ["a certificate", `-----BEGIN CERTIFICATE-----\n${body}-----END CERTIFICATE-----`],
    ["the words private key", "never paste your private key here"],
  ])("does not match %s", (_name, text) => {
    expect(privateKey.matches(text)).toBe(false);
  });
});

describe("cloud_access_key", () => {
  const cloudAccessKey = rule("cloud_access_key");
  // Assembled at run time so secret scanners do not flag the test source.
  const alnum = (n: number) => "A1b2C3d4E5".repeat(4).slice(0, n);

  it.each([
    ["AWS long-term key id", "AKIA" + "IOSFODNN7EXAMPLE"],
    ["AWS temporary key id", "key=ASIA" + "Y34FZKBOKMUTVV7A;"],
    ["Google API key", "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"],
    ["GitHub personal token", "ghp_" + alnum(36)],
    ["GitHub OAuth token", "gho_" + alnum(36)],
    ["GitHub app token", "ghs_" + alnum(36)],
    ["GitHub user-to-server token", "ghu_" + alnum(36)],
    ["GitHub fine-grained token", "github_pat_" + "11ABCDEFG0123456789_" + alnum(40)],
    ["Slack bot token", "xoxb-" + "123456789012-1234567890123-" + alnum(24)],
    ["Slack user token", "token: xoxp-" + "1234567890-abcdefghij"],
  ])("matches a %s", (_name, text) => {
    expect(cloudAccessKey.matches(`use ${text} please`)).toBe(true);
  });

  it.each([
    ["AWS prefix with lower case", "AKIA" + "iosfodnn7example"],
    ["AWS id too short", "AKIA" + "IOSFODNN7EXAMP"],
    ["AWS prefix inside a longer word", "XAKIA" + "IOSFODNN7EXAMPLEX"],
    ["Google key too short", "AIza" + "SyD-9tSrke72PouQ"],
    ["GitHub token too short", "ghp_" + alnum(20)],
    ["unknown GitHub prefix", "ghx_" + alnum(36)],
    ["Slack prefix alone", "tokens look like xoxb-..."],
    ["Slack unknown type", "xoxz-" + "1234567890-abcdefghij"],
    ["Slack prefix followed by dashes", "xoxb-" + "-".repeat(20)],
  ])("does not match a %s", (_name, text) => {
    expect(cloudAccessKey.matches(text)).toBe(false);
  });
});
