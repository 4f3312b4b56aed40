public import Persistence
