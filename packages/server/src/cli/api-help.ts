/** The help text every API command ends with: where it calls, with what, and its exit codes. */
export const API_HELP =
  "\nCalls the API at PARLEY_URL (default http://localhost:8080) with the admin token in PARLEY_TOKEN." +
  "\nExits 2 for a usage error, 3 when not found, 4 when refused, 5 when the server fails or is out of reach" +
  " (exit codes: see parley --help); with --json, errors too are JSON.";
