-- Question callbacks (issue 16, wire rules §7.5) are outbox entries (kind 'callback') that carry the
-- question's message id for the deliveries log, but they report an outcome to a program, not a message to
-- a human: a read mark or the message's deletion must not cancel them (0013's triggers matched any queued
-- entry of the message). Same triggers, callbacks left out. Numbered 0017: 0016 is the questions table.
DROP TRIGGER deliveries_cancel_on_read;
DROP TRIGGER deliveries_cancel_on_channel_read;
DROP TRIGGER deliveries_cancel_on_channel_read_update;
DROP TRIGGER deliveries_cancel_on_delete;
CREATE TRIGGER deliveries_cancel_on_read AFTER INSERT ON message_reads BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'read', next_attempt_at = NULL
   WHERE message_id = NEW.message_id AND status = 'queued' AND user_id = NEW.user_id
     AND kind <> 'callback';
END;
CREATE TRIGGER deliveries_cancel_on_channel_read AFTER INSERT ON channel_reads BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'read', next_attempt_at = NULL
   WHERE appid = NEW.channel_id AND status = 'queued' AND message_id <= NEW.read_up_to
     AND user_id = NEW.user_id AND kind <> 'callback';
END;
CREATE TRIGGER deliveries_cancel_on_channel_read_update AFTER UPDATE OF read_up_to ON channel_reads BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'read', next_attempt_at = NULL
   WHERE appid = NEW.channel_id AND status = 'queued' AND message_id <= NEW.read_up_to
     AND user_id = NEW.user_id AND kind <> 'callback';
END;
CREATE TRIGGER deliveries_cancel_on_delete AFTER DELETE ON messages BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'deleted', next_attempt_at = NULL
   WHERE message_id = OLD.id AND status = 'queued' AND kind <> 'callback';
END;
