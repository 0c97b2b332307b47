// The `ai` package's AbstractChat with a small observable state instead of
// React: every change calls `onChange`, and the page re-renders what changed.
// The transport posts to the app's chat proxy like the live peer check
// (ci/peers/ai_stream/live-round-trip.mjs): only the last message, an
// assistant message trimmed to its decisions.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from "ai";
import { appBase, appFetch } from "./api";

class ObservableState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[];
  constructor(
    messages: UIMessage[],
    private readonly changed: () => void,
  ) {
    this.messages = messages;
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
    this.changed();
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
    this.changed();
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
    this.changed();
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The last message only; an assistant message trimmed to its decisions. */
export function trim(message: UIMessage | undefined): unknown {
  if (!message || message.role !== "assistant") {
    return message;
  }
  const parts = message.parts
    .filter((part) => "state" in part && part.state === "approval-responded")
    .map((part) => {
      const { type, toolCallId, state, approval } = part as unknown as Record<string, unknown>;
      return { type, toolCallId, state, approval };
    });
  return { id: message.id, role: message.role, parts };
}

export class Chat extends AbstractChat<UIMessage> {
  /** Called after every change of messages, status or error. */
  private readonly notify: () => void;
  constructor(id: string, messages: UIMessage[], onChange: () => void) {
    const state = new ObservableState(messages, () => this.notify?.());
    super({
      id,
      state,
      transport: new DefaultChatTransport({
        api: `${appBase()}/api/chat`,
        fetch: appFetch as typeof fetch,
        prepareSendMessagesRequest: ({ id: chatId, messages: all, trigger, messageId }) => ({
          body: { id: chatId, trigger, messageId, message: trim(all.at(-1)) },
        }),
      }),
      // Every pending call decided: post the decisions, as useChat does.
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    this.notify = onChange;
  }

  protected override setStatus(update: { status: ChatStatus; error?: Error }): void {
    super.setStatus(update);
    this.notify();
  }
}
