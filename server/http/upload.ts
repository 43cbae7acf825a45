import type { RequestHandler } from 'express';
import multer from 'multer';
import { UPLOAD_LIMIT_BYTES } from '../lib/limits';
import { errors } from './errors';

/**
 * One multipart file in memory (logos, avatars), at most UPLOAD_LIMIT_BYTES. Multer's own errors are
 * turned into the catalog's: 413 naming the upload limit, 400 for any other malformed body.
 * Callers check the content by its magic bytes, never by the declared type.
 */
export function singleFileUpload(field = 'file'): RequestHandler {
  const single = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: UPLOAD_LIMIT_BYTES, files: 1, fields: 10 },
  }).single(field);
  return (req, res, next) => {
    single(req, res, (err: unknown) => {
      if (!err) return next();
      const code = (err as { code?: unknown }).code;
      if (code === 'LIMIT_FILE_SIZE') return next(errors.payloadTooLarge(UPLOAD_LIMIT_BYTES));
      if (typeof code === 'string' && code.startsWith('LIMIT_'))
        return next(errors.badRequest(`invalid multipart body: one field named ${field} expected`));
      next(errors.badRequest('invalid multipart body'));
    });
  };
}
