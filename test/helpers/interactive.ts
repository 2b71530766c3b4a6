/**
 * Imported first by tests that drive a fake terminal: ink renders only the final frame when it believes it
 * runs in CI (it reads CI when it is first imported), and such a test needs the live frames.
 */
delete process.env.CI;
delete process.env.CONTINUOUS_INTEGRATION;
