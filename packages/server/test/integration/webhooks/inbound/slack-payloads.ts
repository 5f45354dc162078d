/** An Alertmanager Slack receiver payload, as its common templates produce it. */
export const ALERTMANAGER_PAYLOAD = {
  channel: "#alerts",
  username: "Alertmanager",
  icon_emoji: ":fire:",
  attachments: [
    {
      title: "[FIRING:1] HighLatency api (critical)",
      title_link: "http://alertmanager:9093/#/alerts?receiver=slack",
      pretext: "",
      text: "*Alert:* API latency above 500ms - `critical`\n*Description:* p99 latency is 812ms on <http://grafana:3000/d/api|the API dashboard>\n*Details:*\n  • *alertname:* `HighLatency`\n  • *instance:* `api-1:8080`",
      fallback:
        "[FIRING:1] HighLatency api (critical) | http://alertmanager:9093/#/alerts?receiver=slack",
      callback_id: "",
      footer: "",
      color: "danger",
      mrkdwn_in: ["fallback", "pretext", "text"],
    },
  ],
};
