import type { FastifyRequest } from 'fastify';
import type { AuditContext } from '../store/audit.js';

/**
 * Who did it, for the audit log: the operator (admin API), the request id a log line carries and
 * the client address.
 */
export const auditContext = (request: FastifyRequest): AuditContext => ({
  requestId: request.id,
  clientIp: request.ip,
  operator: request.operator?.name,
});
