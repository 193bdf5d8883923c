import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
  type Type,
} from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { APP_GUARD } from '@nestjs/core';
import type { Express } from 'express';
import type { IncomingMessage } from 'node:http';
import { AppModule } from '../src/app.module';
import { DocumentsController } from '../src/documents/documents.controller';
import { McpController } from '../src/mcp/mcp.controller';
import { startTestApp, TestApp } from './support/app';
import { comparable, type RawRequest, send } from './support/mcp-http';

const KEY = 'door-guards-key-0123456789';

/** A guard that refuses (403) the requests whose `X-Refuse` header names it, and no other. */
function refusing(name: string): Type<CanActivate> {
  @Injectable()
  class Refusing implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      const request = context.switchToHttp().getRequest<IncomingMessage>();
      if (request.headers['x-refuse'] === name) throw new ForbiddenException(`refused by ${name}`);
      return true;
    }
  }
  Object.defineProperty(Refusing, 'name', { value: `Refusing_${name}` });
  return Refusing;
}

/**
 * Guards this test adds to the routes the front doors take, where a developer could add
 * one: the controller, the method, or the whole application.
 */
const ADDED: Array<[target: object, guard: Type<CanActivate>]> = [
  [McpController, refusing('mcp-class')],
  [McpController.prototype.internal, refusing('mcp-method')],
  [DocumentsController, refusing('documents-class')],
  [DocumentsController.prototype.list, refusing('documents-list')],
  [DocumentsController.prototype.get, refusing('documents-get')],
];

/** Each door's route: a request it takes, and the same request in a spelling it leaves to Express. */
const DOORS: Array<[route: string, door: RawRequest, routed: string, guards: string[]]> = [
  [
    'POST /mcp',
    {
      method: 'POST',
      path: '/mcp',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    },
    '/mcp/',
    ['mcp-class', 'mcp-method'],
  ],
  ['GET /documents', { path: '/documents' }, '/Documents', ['documents-class', 'documents-list']],
  [
    'GET /documents/{id}',
    { path: '/documents/door/one.md' },
    '/Documents/door/one.md',
    ['documents-class', 'documents-get'],
  ],
];

const CASES = DOORS.flatMap(([route, door, routed, guards]) =>
  ['app-guard', 'global', ...guards].map((guard) => [route, guard, door, routed] as const),
);

/**
 * The front doors (src/common/front-door.ts) run the guards of the routes they stand in
 * front of, wherever a guard is declared: a guard added to a controller, to one of its
 * methods, as an `APP_GUARD` provider or with `useGlobalGuards` refuses on the door exactly
 * as on the routed path, and lets everything else through to the door.
 */
describe('front doors and the guards of their routes', () => {
  let t: TestApp;
  let routed: jest.SpyInstance;
  const before = new Map<object, unknown>();

  beforeAll(async () => {
    // Declared before the application is built, as a decorator would be.
    for (const [target, guard] of ADDED) {
      const guards = (Reflect.getMetadata(GUARDS_METADATA, target) as unknown[]) ?? [];
      before.set(target, Reflect.getMetadata(GUARDS_METADATA, target));
      Reflect.defineMetadata(GUARDS_METADATA, [...guards, guard], target);
    }
    const register = AppModule.register.bind(AppModule);
    jest.spyOn(AppModule, 'register').mockImplementation((config) => {
      const module = register(config);
      const provider = { provide: APP_GUARD, useClass: refusing('app-guard') };
      return { ...module, providers: [...(module.providers ?? []), provider] };
    });
    t = await startTestApp({ API_KEYS: `door:${KEY}:admin,internal` }, undefined, (app) =>
      app.useGlobalGuards(new (refusing('global'))()),
    );
    const created = await send(t.baseUrl, {
      method: 'POST',
      path: '/documents',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': KEY },
      body: { document_id: 'door/one.md', body: '# One' },
    });
    expect(created.status).toBe(201);
    const express = t.app.getHttpAdapter().getInstance() as Express & { handle: () => void };
    routed = jest.spyOn(express, 'handle');
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    for (const [target, guards] of before) {
      if (guards === undefined) Reflect.deleteMetadata(GUARDS_METADATA, target);
      else Reflect.defineMetadata(GUARDS_METADATA, guards, target);
    }
    await t?.close();
  });
  beforeEach(() => routed.mockClear());

  it.each(DOORS)('%s: the door still answers what the guards let through', async (_r, door) => {
    const answer = await send(t.baseUrl, {
      ...door,
      headers: { ...door.headers, 'X-API-Key': KEY },
    });
    expect(routed).not.toHaveBeenCalled();
    expect(answer.status).toBe(200);
  });

  it.each(CASES)('%s: the %s guard refuses on the door as on the route', async (...c) => {
    const [, guard, door, path] = c;
    const headers = { ...door.headers, 'X-API-Key': KEY, 'X-Refuse': guard };
    const fast = await send(t.baseUrl, { ...door, headers });
    expect(routed).not.toHaveBeenCalled();
    expect(fast.status).toBe(403);
    expect(fast.text).toContain(`refused by ${guard}`);
    const viaExpress = await send(t.baseUrl, { ...door, path, headers });
    expect(routed).toHaveBeenCalled();
    expect(comparable(fast)).toEqual(comparable(viaExpress));
  });
});
