import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileTypeFromBuffer } from 'file-type';
import type { AppContext } from '../../context';
import { DATA_DIR_MODE, DATA_FILE_MODE } from '../../db/permissions';
import { errors } from '../../http/errors';
import { findUserById, setImage, type UserRow } from '../users/store';

/** Public URL of an avatar file (served by `GET /image/avatar/{file}`), or "" without one. */
export function avatarUrl(ctx: AppContext, file: string | null): string {
  return file ? `${ctx.publicUrl()}/image/avatar/${file}` : '';
}

/** Accepted avatar formats by content (magic bytes) → stored extension and served type. */
const TYPES: Record<string, { ext: string; mime: string }> = {
  'image/png': { ext: 'png', mime: 'image/png' },
  'image/jpeg': { ext: 'jpg', mime: 'image/jpeg' },
  'image/gif': { ext: 'gif', mime: 'image/gif' },
  'image/webp': { ext: 'webp', mime: 'image/webp' },
};
const MIME_BY_EXT: Record<string, string> = Object.fromEntries(
  Object.values(TYPES).map((t) => [t.ext, t.mime]),
);
export const AVATAR_FILE_RE = /^u\d+-[a-f0-9]{32}\.(png|jpg|gif|webp)$/;

export function avatarsDir(ctx: AppContext): string {
  return join(ctx.config.dataDir, 'uploads', 'avatars');
}

export async function removeAvatarFile(ctx: AppContext, file: string | null): Promise<void> {
  if (!file || !AVATAR_FILE_RE.test(file)) return;
  try {
    await rm(join(avatarsDir(ctx), file), { force: true });
  } catch (err) {
    ctx.log.warn('could not remove an avatar', { file, err });
  }
}

/** Stores an uploaded avatar, replacing the previous one. The content decides, never name or type. */
export async function setAvatar(ctx: AppContext, userId: number, data: Buffer | undefined): Promise<UserRow> {
  if (!data || data.length === 0) throw errors.badRequest('file: required');
  const type = await fileTypeFromBuffer(data);
  const t = type ? TYPES[type.mime] : undefined;
  if (!t) throw errors.unsupportedMediaType('the file is not a PNG, JPEG, GIF or WebP image');
  const file = `u${userId}-${randomBytes(16).toString('hex')}.${t.ext}`;
  await mkdir(avatarsDir(ctx), { recursive: true, mode: DATA_DIR_MODE });
  await writeFile(join(avatarsDir(ctx), file), data, { mode: DATA_FILE_MODE });
  const before = findUserById(ctx.db, userId);
  if (!before) {
    await removeAvatarFile(ctx, file);
    throw errors.unauthorized();
  }
  ctx.db.transaction(() => setImage(ctx.db, userId, file));
  await removeAvatarFile(ctx, before.image);
  return findUserById(ctx.db, userId)!;
}

export async function deleteAvatar(ctx: AppContext, userId: number): Promise<UserRow> {
  const before = findUserById(ctx.db, userId);
  if (!before) throw errors.unauthorized();
  if (before.image) {
    ctx.db.transaction(() => setImage(ctx.db, userId, null));
    await removeAvatarFile(ctx, before.image);
  }
  return findUserById(ctx.db, userId)!;
}

/** The path and type of a stored avatar, or 404. */
export function avatarFile(ctx: AppContext, file: string): { path: string; mime: string } {
  const path = join(avatarsDir(ctx), file);
  if (!AVATAR_FILE_RE.test(file) || !existsSync(path)) throw errors.notFound('image');
  return { path, mime: MIME_BY_EXT[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream' };
}
