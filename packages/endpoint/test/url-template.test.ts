import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseUrlTemplate } from "../src/url-template.js";

interface VectorGroup {
  level?: number;
  variables: Record<string, unknown>;
  testcases: [template: string, expected: string | string[] | false][];
}

function readVectors(file: string): [group: string, VectorGroup][] {
  const url = new URL(`./fixtures/uritemplate-test/${file}`, import.meta.url);
  return Object.entries(JSON.parse(readFileSync(url, "utf8")) as Record<string, VectorGroup>);
}

const expand = (template: string, variables: object): string =>
  parseUrlTemplate(template).expand(variables);

describe.each(["spec-examples.json", "spec-examples-by-section.json", "extended-tests.json"])(
  "RFC 6570 vectors of %s",
  (file) => {
    const cases = readVectors(file).flatMap(([group, { variables, testcases }]) =>
      testcases.map(([template, expected]) => ({ group, template, expected, variables })),
    );

    it("holds test cases", () => {
      expect(cases.length).toBeGreaterThan(50);
    });

    it.each(cases)("$group: expands $template", ({ template, expected, variables }) => {
      const acceptable = Array.isArray(expected) ? expected : [expected];
      expect(acceptable).toContain(expand(template, variables));
    });
  },
);

describe("invalid templates (negative-tests.json)", () => {
  const [[, failures]] = readVectors("negative-tests.json") as [[string, VectorGroup]];

  // Decision: expansion never throws. Following RFC 6570 section 3, text that does not match the
  // grammar (an expression from `{` to the next `}`, an unclosed `{` to the end, a stray `}`) is
  // copied into the result as written, and every valid expression around it still expands.
  const expected: Record<string, string> = {
    "{/id*": "{/id*",
    "/id*}": "/id*}",
    "{/?id}": "{/?id}",
    "{var:prefix}": "{var:prefix}",
    "{hello:2*}": "{hello:2*}",
    "{??hello}": "{??hello}",
    "{!hello}": "{!hello}",
    "{with space}": "{with space}",
    "{ leading_space}": "{ leading_space}",
    "{trailing_space }": "{trailing_space }",
    "{=path}": "{=path}",
    "{$var}": "{$var}",
    "{|var*}": "{|var*}",
    "{*keys?}": "{*keys?}",
    "{?empty=default,var}": "{?empty=default,var}",
    "{var}{-prefix|/-/|var}": "value{-prefix|/-/|var}",
    "?q={searchTerms}&amp;c={example:color?}": "?q=uri%20templates&amp;c={example:color?}",
    "x{?empty|foo=none}": "x{?empty|foo=none}",
    "/h{#hello+}": "/h{#hello+}",
    "/h#{hello+}": "/h#{hello+}",
    // Valid syntax, but a prefix cannot apply to an object: an error found at expansion time.
    "{keys:1}": "{keys:1}",
    "{+keys:1}": "{+keys:1}",
    "{;keys:1*}": "{;keys:1*}",
    "?{-join|&|var,list}": "?{-join|&|var,list}",
    "/people/{~thing}": "/people/{~thing}",
    "/{default-graph-uri}": "/{default-graph-uri}",
    "/sparql{?query,default-graph-uri}": "/sparql{?query,default-graph-uri}",
    "/sparql{?query){&default-graph-uri*}": "/sparql{?query){&default-graph-uri*}",
    "/resolution{?x, y}": "/resolution{?x, y}",
    "{var:0}": "{var:0}",
    "{var:01}": "{var:01}",
    "{var:10000}": "{var:10000}",
    "{var:}": "{var:}",
    "{x.}": "{x.}",
    "{x..y}": "{x..y}",
    "{%2x}": "{%2x}",
  };

  it("has a decided result for every negative case", () => {
    expect(failures.testcases.map(([template]) => template).sort()).toEqual(
      Object.keys(expected).sort(),
    );
  });

  it.each(failures.testcases)("keeps the invalid part of %s as written", (template) => {
    expect(expand(template, failures.variables)).toBe(expected[template]);
  });

  it("does not count the names of invalid expressions as placeholders", () => {
    expect([...parseUrlTemplate("{var}{-prefix|/-/|var}{x.}").variableNames]).toEqual(["var"]);
  });

  it("still expands the valid expressions after an unclosed one is found", () => {
    expect(expand("{a}/{b", { a: "x", b: "y" })).toBe("x/{b");
    expect(expand("{a}}{b}", { a: "x", b: "y" })).toBe("x}y");
  });
});

describe(":name placeholders", () => {
  it("expands a whole path segment like {name}", () => {
    expect(expand("/repos/:owner/:repo", { owner: "octo cat", repo: "hello" })).toBe(
      "/repos/octo%20cat/hello",
    );
  });

  it("expands a missing value to nothing, as an undefined variable does", () => {
    expect(expand("/repos/:owner/:repo", { owner: "parley" })).toBe("/repos/parley/");
  });

  it("lists their names as variables", () => {
    expect([...parseUrlTemplate("/repos/:owner/:repo{?page}").variableNames]).toEqual([
      "owner",
      "repo",
      "page",
    ]);
  });

  it("leaves colons that do not start a whole segment alone", () => {
    const template = "http://localhost:8080/a:b/:c.json/x?at=/:q";
    expect([...parseUrlTemplate(template).variableNames]).toEqual([]);
    expect(expand(template, { b: "B", c: "C", q: "Q" })).toBe(template);
  });

  it("ends at a following expression", () => {
    expect(expand("/rooms/:roomId{?limit}", { roomId: 7, limit: 5 })).toBe("/rooms/7?limit=5");
  });
});

describe("expansion details", () => {
  it("counts prefix lengths in code points, not UTF-16 units", () => {
    expect(expand("{v:2}", { v: "𝄞𝄞𝄞" })).toBe("%F0%9D%84%9E%F0%9D%84%9E");
  });

  it("encodes a lone surrogate as U+FFFD instead of throwing", () => {
    expect(expand("{v}/{+v}", { v: "a\uD800b" })).toBe("a%EF%BF%BDb/a%EF%BF%BDb");
  });

  it("encodes the characters encodeURIComponent leaves alone", () => {
    expect(expand("{v}", { v: "!'()*" })).toBe("%21%27%28%29%2A");
  });

  it("treats null like undefined and skips null list members", () => {
    expect(expand("/a{/x}{?y,z}", { x: null, y: [null, "1", undefined], z: { k: null } })).toBe(
      "/a?y=1",
    );
  });

  it("reads only own properties, so inherited names expand to nothing", () => {
    expect(expand("/{constructor}/{toString}", {})).toBe("//");
  });

  it("expands booleans, numbers and non-plain objects as strings", () => {
    expect(expand("{a},{b},{c}", { a: true, b: 1.5, c: new URL("http://x.test/") })).toBe(
      "true,1.5,http%3A%2F%2Fx.test%2F",
    );
  });

  it("parses a template once and reuses the compiled form", () => {
    expect(parseUrlTemplate("/cached/{id}")).toBe(parseUrlTemplate("/cached/{id}"));
  });
});
