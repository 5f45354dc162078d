import type { ModerationClassifier, ModerationResult } from "./moderation-classifier.js";

type Category = "harassment" | "hate" | "violence" | "self_harm" | "sexual" | "spam";

// Deliberately small and mild: it makes the feature work offline and keeps tests deterministic.
// It is not a substitute for a real provider (PARLEY_MODERATION_PROVIDER=http). Each phrase is
// matched case-insensitively on word boundaries; whitespace or a dash may separate its words.
// Listed in tie-break order: on equal scores the earlier category wins.
const LEXICON: Record<Category, Record<string, number>> = {
  harassment: {
    "worthless idiot": 0.6,
    "you are an idiot": 0.5,
    "you're an idiot": 0.5,
    "nobody likes you": 0.45,
    "shut up": 0.2,
    idiot: 0.3,
    moron: 0.35,
    loser: 0.3,
    pathetic: 0.25,
  },
  hate: {
    "inferior race": 0.8,
    subhuman: 0.7,
    "go back to your country": 0.7,
    vermin: 0.4,
  },
  violence: {
    "kill you": 0.8,
    "shoot you": 0.8,
    "i will hurt you": 0.7,
    "hurt you": 0.45,
    "beat you up": 0.6,
    "burn your house": 0.7,
    stab: 0.45,
  },
  self_harm: {
    "kill myself": 0.85,
    "end my life": 0.85,
    "want to die": 0.7,
    "hurt myself": 0.7,
    "self harm": 0.5,
    suicide: 0.5,
  },
  sexual: {
    "nude pics": 0.7,
    nudes: 0.6,
    porn: 0.6,
    xxx: 0.5,
    "explicit content": 0.4,
    sexy: 0.2,
  },
  spam: {
    "buy now cheap": 0.6,
    "buy now": 0.3,
    "free money": 0.5,
    "crypto giveaway": 0.6,
    "limited time offer": 0.4,
    "100% free": 0.4,
    "click here": 0.3,
    "act now": 0.3,
  },
};

// Links count as spam signals only in numbers: a few are normal in chat, a wall of them or the
// same link pasted again and again is not.
const URL_PATTERN = /\bhttps?:\/\/[^\s<>"']+/gi;
const FREE_DISTINCT_LINKS = 3;
const EXTRA_LINK_WEIGHT = 0.15;
const REPEATED_LINK_WEIGHT = 0.3;

function phrasePattern(phrase: string): RegExp {
  const words = phrase.split(" ").map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  // \b only works next to word characters; "100% free" ends its first word on "%".
  const start = /^\w/.test(phrase) ? "\\b" : "";
  const end = /\w$/.test(phrase) ? "\\b" : "";
  return new RegExp(`${start}${words.join("[\\s-]+")}${end}`, "gi");
}

const COMPILED = Object.entries(LEXICON).map(([category, phrases]) => ({
  category,
  phrases: Object.entries(phrases).map(([phrase, weight]) => ({
    pattern: phrasePattern(phrase),
    weight,
  })),
}));

// Most messages contain no phrase at all: one scan with every pattern as an alternative tells so,
// and spares the ~40 per-phrase scans (the classifier was a tenth of ingest's CPU time). A
// phrase matches somewhere iff the alternation does, so results are unchanged.
const ANY_PHRASE = new RegExp(
  COMPILED.flatMap(({ phrases }) => phrases.map(({ pattern }) => `(?:${pattern.source})`)).join(
    "|",
  ),
  "i",
);

function linkWeights(text: string): number[] {
  const seen = new Set<string>();
  const weights: number[] = [];
  for (const [url] of text.matchAll(URL_PATTERN)) {
    const key = url.toLowerCase();
    if (seen.has(key)) weights.push(REPEATED_LINK_WEIGHT);
    else if (seen.add(key).size > FREE_DISTINCT_LINKS) weights.push(EXTRA_LINK_WEIGHT);
  }
  return weights;
}

/** 1 - Π(1 - w): independent pieces of evidence, each making the category more likely. */
function combine(weights: readonly number[]): number {
  const score = 1 - weights.reduce((remaining, weight) => remaining * (1 - weight), 1);
  return Math.min(1, Math.max(0, score));
}

function classifyText(text: string): ModerationResult {
  let best: ModerationResult = { category: "none", score: 0 };
  const anyPhrase = ANY_PHRASE.test(text);
  for (const { category, phrases } of COMPILED) {
    // Every occurrence is a hit, so a repeated threat scores higher than a single one.
    const weights = anyPhrase
      ? phrases.flatMap(({ pattern, weight }) => Array.from(text.matchAll(pattern), () => weight))
      : [];
    if (category === "spam") weights.push(...linkWeights(text));
    if (weights.length === 0) continue;
    const score = combine(weights);
    if (score > best.score) best = { category, score };
  }
  return best;
}

/** An offline, deterministic classifier over a small weighted lexicon. */
export function createLocalClassifier(): ModerationClassifier {
  return {
    name: "local",
    classify: async (text) => classifyText(text),
  };
}
