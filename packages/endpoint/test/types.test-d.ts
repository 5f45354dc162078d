import { describe, expectTypeOf, it } from "vitest";
import { endpoint, type EndpointInterface, type RequestOptions } from "../src/index.js";

// Type-checked only, by vitest's typecheck (npm test) and by npm run typecheck: nothing here runs.

describe("types", () => {
  it("keeps the endpoint type through chained .defaults()", () => {
    const bound = endpoint.defaults({ org: "parley" }).defaults({ per_page: 50 });
    expectTypeOf(bound).toExtend<EndpointInterface>();
    expectTypeOf(bound.DEFAULTS.org).toEqualTypeOf<string>();
    expectTypeOf(bound.DEFAULTS.per_page).toEqualTypeOf<number>();
    expectTypeOf(bound.DEFAULTS.baseUrl).toEqualTypeOf<string>();
    expectTypeOf(bound("GET /rooms")).toEqualTypeOf<RequestOptions>();
    expectTypeOf(bound.defaults({ a: true }).DEFAULTS.a).toEqualTypeOf<boolean>();
  });

  it("types a later default over an earlier one", () => {
    const bound = endpoint.defaults({ page: "1" }).defaults({ page: 2 });
    expectTypeOf(bound.DEFAULTS.page).toEqualTypeOf<number>();
  });

  it("types the result", () => {
    const result = endpoint("GET /rooms");
    expectTypeOf(result.method).toEqualTypeOf<string>();
    // Values as given: a number passed in stays a number.
    expectTypeOf(result.headers).toEqualTypeOf<Record<string, string | number | boolean>>();
    expectTypeOf(endpoint.merge("GET /").mediaType.previews).toEqualTypeOf<string[]>();
  });
});
