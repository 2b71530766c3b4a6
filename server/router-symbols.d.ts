/** The router package's own symbols (Express 5's router; it ships no types). server/http-server.ts declares this one. */
declare module 'router/lib/symbols.js' {
  /** The route pattern that matched, kept on the request for diagnostics_channel tracing. */
  export const matchedRoute: unique symbol;
}
