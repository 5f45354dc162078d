import type { Config } from "../config/load-config.js";
import { createBuiltinScanner, loadSha256Blocklist } from "./antivirus/builtin-scanner.js";
import type { AntivirusScanner } from "./antivirus/antivirus-scanner.js";
import { createClamAvScanner } from "./antivirus/clamav-scanner.js";
import { loadDlpPolicy, type DlpPolicy } from "./dlp/dlp-policy.js";
import { createHttpClassifier } from "./moderation/http-classifier.js";
import { createLocalClassifier } from "./moderation/local-classifier.js";
import type { ModerationClassifier } from "./moderation/moderation-classifier.js";
import type { ModerationThresholds } from "./moderation/moderation-decision.js";

/** The safety checks in force. Antivirus and AI moderation are Enterprise features (null otherwise). */
export interface Safety {
  dlp: DlpPolicy;
  scanner: AntivirusScanner | null;
  classifier: ModerationClassifier | null;
  thresholds: ModerationThresholds;
}

export function createSafety(config: Config): Safety {
  const enterprise = config.edition === "enterprise";
  let scanner: AntivirusScanner | null = null;
  if (enterprise) {
    scanner = config.clamavUrl
      ? createClamAvScanner({ url: config.clamavUrl })
      : createBuiltinScanner(
          config.avBlocklistFile
            ? { sha256Blocklist: loadSha256Blocklist(config.avBlocklistFile) }
            : {},
        );
  }
  let classifier: ModerationClassifier | null = null;
  if (enterprise && config.moderationProvider === "local") classifier = createLocalClassifier();
  if (enterprise && config.moderationProvider === "http") {
    classifier = createHttpClassifier({
      url: config.moderationUrl!,
      ...(config.moderationApiKey ? { apiKey: config.moderationApiKey } : {}),
    });
  }
  return {
    dlp: loadDlpPolicy(config.dlpPolicyFile),
    scanner,
    classifier,
    thresholds: {
      flag: config.moderationFlagThreshold,
      quarantine: config.moderationQuarantineThreshold,
    },
  };
}
