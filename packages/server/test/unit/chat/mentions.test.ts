import { describe, expect, it } from "vitest";
import { mentionCandidates } from "../../../src/chat/mentions.js";

describe("mentionCandidates", () => {
  it("finds @names in markdown text, in order of first appearance, each once", () => {
    expect(mentionCandidates("@bob and @carol, then @bob again", "markdown")).toEqual([
      ["bob"],
      ["carol"],
    ]);
  });

  it("leaves out code spans and code blocks", () => {
    expect(mentionCandidates("`@bob` and\n\n```\n@carol\n```\n\n    @dave\n", "markdown")).toEqual(
      [],
    );
  });

  it("leaves out e-mail addresses, URLs and link addresses, keeps a link's label", () => {
    expect(
      mentionCandidates(
        "mail ops@example.com, see https://x.example/@erin and [@frank](https://x.example/@gina)",
        "markdown",
      ),
    ).toEqual([["frank"]]);
  });

  it("offers a name ending in punctuation without it too, and lower-cases it", () => {
    expect(mentionCandidates("thanks @Bob.", "markdown")).toEqual([["bob.", "bob"]]);
  });

  it("finds mentions in emphasis, lists and quotes", () => {
    expect(mentionCandidates("> **@ann**\n\n- _@bo_", "markdown")).toEqual([["ann"], ["bo"]]);
  });

  it("answers nothing for content without @ or for HTML content", () => {
    expect(mentionCandidates("no one here", "markdown")).toEqual([]);
    expect(mentionCandidates("<p>@bob</p>", "html")).toEqual([]);
  });
});
