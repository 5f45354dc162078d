import { createServer } from "node:http";
import type { AddressInfo, Server } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClassifier } from "../../../src/safety/moderation/http-classifier.js";
import { ModerationUnavailableError } from "../../../src/safety/moderation/moderation-unavailable-error.js";

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      (server as ReturnType<typeof createServer>).closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

async function startProvider(
  answer: (response: ServerResponse) => void,
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method!,
        url: request.url!,
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
      });
      answer(response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/moderations`, received };
}

const json = (status: number, body: unknown) => (response: ServerResponse) => {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
};

const scores = (categoryScores: Record<string, unknown>) =>
  json(200, { id: "modr-1", results: [{ flagged: false, category_scores: categoryScores }] });

async function classifyError(promise: Promise<unknown>): Promise<ModerationUnavailableError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ModerationUnavailableError) return error;
    throw error;
  }
  throw new Error("expected classify to fail");
}

describe("createHttpClassifier", () => {
  it("posts the input and model with the bearer key and returns the top category", async () => {
    const provider = await startProvider(
      scores({ harassment: 0.2, "self-harm/intent": 0.91, "sexual/minors": 0.01, violence: 0.4 }),
    );
    const classifier = createHttpClassifier({
      url: provider.url,
      apiKey: "test-key-123",
      model: "omni-moderation-latest",
    });
    expect(classifier.name).toBe("http");
    await expect(classifier.classify("some text")).resolves.toEqual({
      category: "self_harm_intent",
      score: 0.91,
    });
    const [request] = provider.received;
    expect(request!.method).toBe("POST");
    expect(request!.url).toBe("/v1/moderations");
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers.authorization).toBe("Bearer test-key-123");
    expect(request!.body).toEqual({ input: "some text", model: "omni-moderation-latest" });
  });

  it("sends no Authorization header and no model when they are not configured", async () => {
    const provider = await startProvider(scores({ hate: 0.3 }));
    await expect(createHttpClassifier({ url: provider.url }).classify("x")).resolves.toEqual({
      category: "hate",
      score: 0.3,
    });
    expect(provider.received[0]!.headers.authorization).toBeUndefined();
    expect(provider.received[0]!.body).toEqual({ input: "x" });
  });

  it("answers none with score 0 when every score is 0", async () => {
    const provider = await startProvider(scores({ hate: 0, violence: 0 }));
    await expect(createHttpClassifier({ url: provider.url }).classify("x")).resolves.toEqual({
      category: "none",
      score: 0,
    });
  });

  it("normalises slashes and dashes in category names", async () => {
    const provider = await startProvider(scores({ "Harassment/Threatening": 0.7 }));
    await expect(createHttpClassifier({ url: provider.url }).classify("x")).resolves.toEqual({
      category: "harassment_threatening",
      score: 0.7,
    });
  });

  it("fails with moderation_unavailable on a non-2xx answer, without leaking the key", async () => {
    const provider = await startProvider(json(401, { error: "bad key" }));
    const error = await classifyError(
      createHttpClassifier({ url: `${provider.url}?key=secret-q`, apiKey: "secret-k" }).classify(
        "x",
      ),
    );
    expect(error.code).toBe("moderation_unavailable");
    expect(error.message).toContain("answered HTTP 401");
    expect(error.message).toContain(provider.url);
    expect(error.message).not.toMatch(/secret/);
  });

  it("fails with moderation_unavailable on a redirect instead of following it", async () => {
    const provider = await startProvider((response) => {
      response.writeHead(302, { location: "http://127.0.0.1:1/" });
      response.end();
    });
    const error = await classifyError(createHttpClassifier({ url: provider.url }).classify("x"));
    expect(error.message).toContain("answered HTTP 302");
  });

  it("fails with moderation_unavailable on a body that is not JSON", async () => {
    const provider = await startProvider((response) => response.end("<html>oops</html>"));
    const error = await classifyError(createHttpClassifier({ url: provider.url }).classify("x"));
    expect(error.message).toContain("not JSON");
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it.each([
    ["no results", {}],
    ["empty results", { results: [] }],
    ["scores that are not numbers", { results: [{ category_scores: { hate: "high" } }] }],
    ["a score above 1", { results: [{ category_scores: { hate: 1.5 } }] }],
  ])("fails with moderation_unavailable on JSON with %s", async (_name, body) => {
    const provider = await startProvider(json(200, body));
    const error = await classifyError(createHttpClassifier({ url: provider.url }).classify("x"));
    expect(error.message).toContain("results[0].category_scores");
  });

  it("fails with moderation_unavailable when the provider does not answer in time", async () => {
    const provider = await startProvider(() => {
      /* never answers */
    });
    const started = Date.now();
    const error = await classifyError(
      createHttpClassifier({ url: provider.url, timeoutMs: 200 }).classify("x"),
    );
    expect(error.message).toContain("no answer within 200 ms");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("fails with moderation_unavailable when nothing listens", async () => {
    const provider = await startProvider(scores({}));
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const error = await classifyError(createHttpClassifier({ url: provider.url }).classify("x"));
    expect(error.message).toMatch(/request failed/);
  });
});
