import type { Migration } from "kysely";
import { initial } from "./001-initial.js";
import { roomDmKey } from "./002-room-dm-key.js";
import { inboundAllowOverrides } from "./003-inbound-allow-overrides.js";
import { deliveryClaimIndexes } from "./004-delivery-claim-indexes.js";
import { tokenRevocation } from "./005-token-revocation.js";
import { realtime } from "./006-realtime.js";
import { operatingEndpoints } from "./007-operating-endpoints.js";
import { idsNeverReused } from "./008-ids-never-reused.js";
import { dueIndexesPartial } from "./009-due-indexes-partial.js";
import { endpointCircuit } from "./010-endpoint-circuit.js";
import { deliveryLeaseIndex } from "./011-delivery-lease-index.js";
import { messagesThatLive } from "./012-messages-that-live.js";
import { messageReactions } from "./013-message-reactions.js";
import { signIn } from "./014-sign-in.js";
import { roomsToFind } from "./015-rooms-to-find.js";
import { messageFiles } from "./016-message-files.js";
import { messageSearch } from "./017-message-search.js";
import { inboundFromTheWorld } from "./018-inbound-from-the-world.js";
import { orderedLanes } from "./020-ordered-lanes.js";
import { deliveryFormatAndTrace } from "./021-delivery-format-and-trace.js";
import { endpointAuthTls } from "./022-endpoint-auth-tls.js";
import { ed25519AndOwnership } from "./023-ed25519-and-ownership.js";
import { deliveryStatesAndReplay } from "./024-delivery-states-and-replay.js";
import { searchAfterCommit } from "./025-search-after-commit.js";
import { adminPages } from "./027-admin-pages.js";

/** Every migration, in order. Names sort; never rename or edit one that has shipped. */
export const MIGRATIONS: Record<string, Migration> = {
  "001-initial": initial,
  "002-room-dm-key": roomDmKey,
  "003-inbound-allow-overrides": inboundAllowOverrides,
  "004-delivery-claim-indexes": deliveryClaimIndexes,
  "005-token-revocation": tokenRevocation,
  "006-realtime": realtime,
  "007-operating-endpoints": operatingEndpoints,
  "008-ids-never-reused": idsNeverReused,
  "009-due-indexes-partial": dueIndexesPartial,
  "010-endpoint-circuit": endpointCircuit,
  "011-delivery-lease-index": deliveryLeaseIndex,
  "012-messages-that-live": messagesThatLive,
  "013-message-reactions": messageReactions,
  "014-sign-in": signIn,
  "015-rooms-to-find": roomsToFind,
  "016-message-files": messageFiles,
  "017-message-search": messageSearch,
  "018-inbound-from-the-world": inboundFromTheWorld,
  "020-ordered-lanes": orderedLanes,
  "021-delivery-format-and-trace": deliveryFormatAndTrace,
  "022-endpoint-auth-tls": endpointAuthTls,
  "023-ed25519-and-ownership": ed25519AndOwnership,
  "024-delivery-states-and-replay": deliveryStatesAndReplay,
  "025-search-after-commit": searchAfterCommit,
  "027-admin-pages": adminPages,
};
