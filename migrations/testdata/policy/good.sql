-- events: emit
CREATE TABLE notes (id int);
-- events: none (bookkeeping)
CREATE UNLOGGED TABLE IF NOT EXISTS scratch (id int);
CREATE TRIGGER notes_changed AFTER INSERT OR DELETE ON notes FOR EACH ROW EXECUTE FUNCTION f();
