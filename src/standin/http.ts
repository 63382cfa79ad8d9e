// Small helpers for the stand-in's raw node:http handlers.
import type { IncomingMessage, ServerResponse } from 'node:http';

export function headerValue(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export function sendJson(response: ServerResponse, status: number, payload: unknown): void {
  sendText(response, status, JSON.stringify(payload));
}

export function sendText(response: ServerResponse, status: number, json: string): void {
  if (response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  response.end(json);
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
