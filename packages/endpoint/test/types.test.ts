import { describe, expectTypeOf, it } from "vitest";
import { endpoint, type EndpointInterface, type RequestOptions } from "../src/index.js";

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
    expectTypeOf(result.headers).toEqualTypeOf<Record<string, string>>();
    expectTypeOf(endpoint.merge("GET /").mediaType.previews).toEqualTypeOf<string[]>();
  });
});
