import { describe, expect, it } from "vitest";
import { createLocalClassifier } from "../../../src/safety/moderation/local-classifier.js";

const classifier = createLocalClassifier();
const classify = (text: string) => classifier.classify(text);

describe("createLocalClassifier", () => {
  it("is named local", () => {
    expect(classifier.name).toBe("local");
  });

  it("finds nothing in ordinary chat", async () => {
    await expect(
      classify("Deploy is done, see https://ci.example/42 for the log."),
    ).resolves.toEqual({ category: "none", score: 0 });
  });

  it.each([
    ["harassment", "you worthless idiot", 0.6 + 0.4 * 0.3],
    ["hate", "they are subhuman", 0.7],
    ["violence", "I will KILL YOU", 0.8],
    ["self_harm", "sometimes I want to die", 0.7],
    ["sexual", "send nude pics", 0.7],
    ["spam", "Buy now cheap watches", 1 - 0.4 * 0.7],
  ])("scores %s phrases", async (category, text, score) => {
    const result = await classify(text);
    expect(result.category).toBe(category);
    expect(result.score).toBeCloseTo(score, 10);
  });

  it("matches whole words only", async () => {
    await expect(classify("the skill you need")).resolves.toEqual({ category: "none", score: 0 });
    await expect(classify("idiotic")).resolves.toEqual({ category: "none", score: 0 });
  });

  it("accepts any whitespace or a dash between the words of a phrase", async () => {
    await expect(classify("talk about self-harm")).resolves.toMatchObject({
      category: "self_harm",
    });
    await expect(classify("kill\n  you")).resolves.toMatchObject({ category: "violence" });
  });

  it("combines hits as 1 - Π(1 - w), so repeats raise the score", async () => {
    const once = await classify("kill you");
    const twice = await classify("kill you, kill you");
    expect(once.score).toBeCloseTo(0.8, 10);
    expect(twice.score).toBeCloseTo(1 - 0.2 * 0.2, 10);
  });

  it("never scores above 1", async () => {
    const result = await classify("kill you ".repeat(200));
    expect(result.score).toBeLessThanOrEqual(1);
    expect(result.score).toBeGreaterThan(0.99);
  });

  it("reports the category with the highest score", async () => {
    await expect(classify("shut up or I will kill you")).resolves.toMatchObject({
      category: "violence",
    });
  });

  it("treats a few links as normal and a wall of links or a repeated link as spam", async () => {
    const links = (n: number) =>
      Array.from({ length: n }, (_, i) => `https://site${i}.example/`).join(" ");
    await expect(classify(links(3))).resolves.toEqual({ category: "none", score: 0 });
    const wall = await classify(links(8));
    expect(wall.category).toBe("spam");
    expect(wall.score).toBeCloseTo(1 - 0.85 ** 5, 10);
    const repeated = await classify("https://promo.example/x ".repeat(4));
    expect(repeated.score).toBeCloseTo(1 - 0.7 ** 3, 10);
  });

  it("gives the same answer every time", async () => {
    const text = "you are an idiot, buy now";
    const results = await Promise.all([1, 2, 3].map(() => classify(text)));
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
  });
});
