console.log("labdeck client")
