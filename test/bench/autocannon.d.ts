// The part of autocannon's programmatic API the lookup load uses (it ships no types).
declare module 'autocannon' {
  export interface Request {
    method?: string;
    path?: string;
    setupRequest?: (request: { path: string }) => { path: string };
  }
  export interface Options {
    url: string;
    connections?: number;
    overallRate?: number;
    duration?: number;
    requests?: Request[];
  }
  export interface Result {
    requests: { average: number; total: number; sent: number };
    latency: { p50: number; p90: number; p99: number; max: number; average: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
