//! The distributed batch's queue, on Redis Streams. Tasks are entries of the stream
//! `NAME:tasks`, read by the consumer group `workers`; a task a worker claimed and then
//! stopped answering for (its process died) is claimed by another worker once it has been
//! idle for the visibility timeout (`XAUTOCLAIM`), while a live worker keeps its own task
//! fresh (and only its own). Each attempt is counted (`NAME:attempts`). A task's result, patch
//! and event log are stored together and only if it has no result yet (`NAME:results`,
//! `NAME:patches`, `NAME:events`, one script), so a task re-delivered after all never finishes
//! twice and no result is ever seen without its patch. Several writes that belong together are
//! scripts, which Redis runs whole.

use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use redis::streams::{StreamAutoClaimOptions, StreamAutoClaimReply, StreamReadOptions, StreamReadReply};
use std::time::Duration;

const GROUP: &str = "workers";

/// Queues a task unless it is queued already: KEYS queued set, stream; ARGV id, task.
const ENQUEUE: &str = r"
if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[1], 'task', ARGV[2])
end
return 0";

/// Stores an outcome unless there is one, then takes the entry off the stream: KEYS
/// results, patches, events, stream; ARGV id, result, patch, events, entry. 1 when stored.
const FINISH: &str = r"
local first = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
if first == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
end
redis.call('XACK', KEYS[4], 'workers', ARGV[5])
redis.call('XDEL', KEYS[4], ARGV[5])
return first";

/// Keeps an entry fresh if `consumer` still holds it: KEYS stream; ARGV entry, consumer.
/// 1 when it does.
const KEEP: &str = r"
local pending = redis.call('XPENDING', KEYS[1], 'workers', ARGV[1], ARGV[1], 1)
if pending[1] == nil or pending[1][2] ~= ARGV[2] then return 0 end
redis.call('XCLAIM', KEYS[1], 'workers', ARGV[2], 0, ARGV[1], 'JUSTID')
return 1";

/// A task handed to a worker: its stream entry, its id and its JSON line.
pub struct Delivery {
    pub entry: String,
    pub id: String,
    pub task: String,
}

/// A finished task as stored: its result's JSON, its patch and its event log.
pub struct Stored {
    pub result: String,
    pub patch: String,
    pub events: String,
}

#[derive(Clone)]
pub struct Queue {
    con: ConnectionManager,
    name: String,
    /// Where the next `XAUTOCLAIM` scan starts, so that every pending entry is looked at in
    /// turn, not only the first ones.
    cursor: String,
}

fn failed(what: &str) -> impl Fn(redis::RedisError) -> String + '_ {
    move |e| format!("the queue: {what}: {e}")
}

/// A queue address as it may be shown: a password in it replaced.
pub fn shown(url: &str) -> String {
    // A Unix socket's address carries its credentials as `?pass=...&user=...`: none shown.
    let url = url.split('?').next().unwrap_or(url);
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => format!("{}***{}", &url[..scheme + 3], &url[at..]),
        _ => url.to_string(),
    }
}

impl Queue {
    /// Connects (reconnecting by itself after a lost connection) and makes sure the stream and
    /// its group exist.
    pub async fn connect(url: &str, name: &str) -> Result<Self, String> {
        let shown = shown(url);
        let client = redis::Client::open(url).map_err(|e| format!("--queue {shown}: {e}"))?;
        // A worker waits in XREADGROUP's BLOCK for a second at a time: replies may take that
        // long (the default cut them off at half a second).
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(Duration::from_secs(30)))
            .set_connection_timeout(Some(Duration::from_secs(10)));
        let con = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| format!("cannot reach the queue at {shown}: {e}"))?;
        let mut queue = Self {
            con,
            name: name.to_string(),
            cursor: "0-0".to_string(),
        };
        queue.ensure_group().await?;
        Ok(queue)
    }

    fn key(&self, what: &str) -> String {
        format!("{}:{what}", self.name)
    }

    /// The group, made with its stream unless it is there (a restarted Redis without its
    /// data has neither).
    pub async fn ensure_group(&mut self) -> Result<(), String> {
        let stream = self.key("tasks");
        let made: redis::RedisResult<()> = self.con.xgroup_create_mkstream(&stream, GROUP, "0").await;
        match made {
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            other => other.map_err(failed("creating the workers' group")),
        }
    }

    /// Puts `task` (its JSON line) on the queue unless it is queued already.
    pub async fn enqueue(&mut self, id: &str, task: &str) -> Result<(), String> {
        redis::Script::new(ENQUEUE)
            .key(self.key("queued"))
            .key(self.key("tasks"))
            .arg(id)
            .arg(task)
            .invoke_async::<i64>(&mut self.con)
            .await
            .map(drop)
            .map_err(failed("adding a task"))
    }

    /// Whether `id` is known as queued (a Redis that lost its data knows nothing).
    pub async fn is_queued(&mut self, id: &str) -> Result<bool, String> {
        self.con
            .sismember(self.key("queued"), id)
            .await
            .map_err(failed("reading the queued tasks"))
    }

    /// The stored outcome of each of `ids` that finished.
    pub async fn stored(&mut self, ids: &[&str]) -> Result<Vec<Option<Stored>>, String> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // One HMGET for all: a batch waits on thousands of tasks.
        let results: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(self.key("results"))
            .arg(ids)
            .query_async(&mut self.con)
            .await
            .map_err(failed("reading results"))?;
        let mut stored = Vec::with_capacity(ids.len());
        for (id, result) in ids.iter().zip(results) {
            stored.push(match result {
                None => None,
                // Written with its result in one script: present when the result is.
                Some(result) => {
                    let patch: Option<String> = self
                        .con
                        .hget(self.key("patches"), id)
                        .await
                        .map_err(failed("reading a patch"))?;
                    let events: Option<String> = self
                        .con
                        .hget(self.key("events"), id)
                        .await
                        .map_err(failed("reading a log"))?;
                    Some(Stored {
                        result,
                        patch: patch.unwrap_or_default(),
                        events: events.unwrap_or_default(),
                    })
                }
            });
        }
        Ok(stored)
    }

    /// Forgets `id`'s outcome and attempts, so that it can be queued and run again.
    pub async fn forget(&mut self, id: &str) -> Result<(), String> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        for key in ["results", "patches", "events", "attempts"] {
            pipe.hdel(self.key(key), id).ignore();
        }
        pipe.srem(self.key("queued"), id).ignore();
        pipe.query_async::<()>(&mut self.con)
            .await
            .map_err(failed("forgetting a task"))
    }

    /// The next task for `consumer`: one idle longer than `visibility` (its worker died)
    /// first, else a new one, waiting up to `wait`; `None` when there is none.
    pub async fn claim(
        &mut self,
        consumer: &str,
        visibility: Duration,
        wait: Duration,
    ) -> Result<Option<Delivery>, String> {
        let stream = self.key("tasks");
        let stale: StreamAutoClaimReply = self
            .con
            .xautoclaim_options(
                &stream,
                GROUP,
                consumer,
                visibility.as_millis() as u64,
                &self.cursor,
                StreamAutoClaimOptions::default().count(1),
            )
            .await
            .map_err(failed("claiming a stale task"))?;
        self.cursor = stale.next_stream_id;
        if let Some(entry) = stale.claimed.into_iter().next() {
            return Ok(delivery(entry));
        }
        let options = StreamReadOptions::default()
            .group(GROUP, consumer)
            .count(1)
            .block(wait.as_millis() as usize);
        let fresh: Option<StreamReadReply> = self
            .con
            .xread_options(&[&stream], &[">"], &options)
            .await
            .map_err(failed("reading a task"))?;
        Ok(fresh
            .and_then(|reply| reply.keys.into_iter().next())
            .and_then(|key| key.ids.into_iter().next())
            .and_then(delivery))
    }

    /// Counts an attempt at `id`; the attempts so far.
    pub async fn attempt(&mut self, id: &str) -> Result<u64, String> {
        self.con
            .hincr(self.key("attempts"), id, 1)
            .await
            .map_err(failed("counting an attempt"))
    }

    /// Whether `id` has a result already.
    pub async fn finished(&mut self, id: &str) -> Result<bool, String> {
        self.con
            .hexists(self.key("results"), id)
            .await
            .map_err(failed("reading a result"))
    }

    /// Keeps `entry` fresh in the group while `consumer` holds it; `false` once another
    /// worker took it (this one was thought dead), which is never taken back.
    pub async fn keep(&mut self, consumer: &str, entry: &str) -> Result<bool, String> {
        redis::Script::new(KEEP)
            .key(self.key("tasks"))
            .arg(entry)
            .arg(consumer)
            .invoke_async::<i64>(&mut self.con)
            .await
            .map(|held| held == 1)
            .map_err(failed("keeping a task"))
    }

    /// Stores `stored` as `id`'s outcome unless one is there (the first wins), and takes
    /// `entry` off the queue. Whether this outcome was the one kept.
    pub async fn finish(&mut self, entry: &str, id: &str, stored: &Stored) -> Result<bool, String> {
        redis::Script::new(FINISH)
            .key(self.key("results"))
            .key(self.key("patches"))
            .key(self.key("events"))
            .key(self.key("tasks"))
            .arg(id)
            .arg(&stored.result)
            .arg(&stored.patch)
            .arg(&stored.events)
            .arg(entry)
            .invoke_async::<i64>(&mut self.con)
            .await
            .map(|first| first == 1)
            .map_err(failed("storing a result"))
    }

    /// Takes `entry` off the queue.
    pub async fn done(&mut self, entry: &str) -> Result<(), String> {
        let stream = self.key("tasks");
        let _: u32 = self
            .con
            .xack(&stream, GROUP, &[entry])
            .await
            .map_err(failed("acknowledging a task"))?;
        let _: u32 = self
            .con
            .xdel(&stream, &[entry])
            .await
            .map_err(failed("removing a task"))?;
        Ok(())
    }
}

fn delivery(entry: redis::streams::StreamId) -> Option<Delivery> {
    let id: String = entry.get("id")?;
    let task: String = entry.get("task")?;
    Some(Delivery {
        entry: entry.id,
        id,
        task,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_address_is_shown_without_its_password() {
        assert_eq!(shown("redis://:s3cret@queue:6379/0"), "redis://***@queue:6379/0");
        assert_eq!(shown("rediss://user:pw@h/0"), "rediss://***@h/0");
        assert_eq!(shown("redis+unix:///tmp/r.sock"), "redis+unix:///tmp/r.sock");
        assert_eq!(
            shown("redis+unix:///tmp/r.sock?pass=hunter2&db=1"),
            "redis+unix:///tmp/r.sock"
        );
    }
}
