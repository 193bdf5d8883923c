import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  SetMetadata,
} from '@nestjs/common';
import type { McpProfile } from '../auth/mcp-routes';

export const MCP_PROFILE = 'mcp:profile';
export const MCP_SECRET_ROUTE = 'mcp:secret-route';

/** Marks a handler as the endpoint of `profile`; the guards and the controller read it. */
export const McpEndpoint = (profile: McpProfile) => SetMetadata(MCP_PROFILE, profile);

/** The secret GPT route: authenticated by the token in its path instead of an API key. */
export const SecretRoute = () =>
  applyDecorators(SetMetadata(MCP_PROFILE, 'gpt'), SetMetadata(MCP_SECRET_ROUTE, true));

/** The profile of the route being handled, read from its {@link McpEndpoint} metadata. */
export const RouteProfile = createParamDecorator(
  (_data: unknown, context: ExecutionContext): McpProfile =>
    Reflect.getMetadata(MCP_PROFILE, context.getHandler()) as McpProfile,
);
