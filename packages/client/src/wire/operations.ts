/** Health and readiness. */
import { Type, type Static } from "@sinclair/typebox";

/** `/healthz` answers `{status: "ok"}`, `/readyz` `{status: "ready"}`. */
export const HealthStatusSchema = Type.Object({ status: Type.String() });
export type HealthStatus = Static<typeof HealthStatusSchema>;
